"""Checkpoint layouts for tools/convert.py.

Each module NAME.py here exports
    mismatch(source) -> None or str             (for --format auto: None when the source looks
                                                like this layout, else why not, naming the
                                                tensor or config.json key that rules it out)
    add_arguments(group)                        (its command-line flags, if any, added to the
                                                argparse group convert.py made for it)
    plan(source, args) -> (config, [(spec_name, shape, loader)])
where loader() returns a float32/float64 array of exactly that shape.  plan() must account for
every source tensor and raise ConvertError (below) for anything it does not fully understand.

ConvertError lives here (not in convert.py) so that the class is the same whether convert.py
runs as a script or is imported.
"""

import sys

import numpy as np


class ConvertError(Exception):
    """A source the converter refuses; the message names the tensor, key or file at fault."""


def head_count(src_heads, n_signal, what):
    """src_heads[i] = the source head read by signal head i.  Returns (n, heads): the smallest n
    dividing n_signal such that head i reads block floor(i * n / n_signal) (docs/format.md section 1's head-index rule), and
    the source head behind each of the n blocks.  n = n_signal (one block per signal head,
    duplicating source heads) always works."""
    for n in range(1, n_signal + 1):
        if n_signal % n:
            continue
        g = n_signal // n
        blocks = [src_heads[c * g] for c in range(n)]
        if all(src_heads[i] == blocks[i // g] for i in range(n_signal)):
            return n, blocks
    raise ConvertError("internal: no head count for %s" % what)  # unreachable


def rows(w, heads, width):
    """Concatenates row blocks heads[k]*width .. +width of a 2-D weight."""
    return np.concatenate([w[h * width:(h + 1) * width] for h in heads], axis=0)


def auto_prefix(names, prefixes):
    """The longest chain of prefixes (in any order, each possibly repeated) that every name has;
    '' for no names."""
    prefix = ""
    changed = True
    while changed:
        changed = False
        for p in prefixes:
            if names and all(n.startswith(prefix + p) for n in names):
                prefix += p
                changed = True
    return prefix


# HF config.json keys that change nothing in the file written (bookkeeping, training-only settings,
# the tokenizer's ids, which convert.py reads itself); any layout may list them as inert
HF_INERT = {"architectures", "model_type", "torch_dtype", "dtype", "transformers_version", "bos_token_id",
            "eos_token_id", "pad_token_id", "initializer_range", "use_cache", "attention_dropout", "dropout",
            "hidden_dropout", "_name_or_path"}


def report_unread(layout, cfg, read, inert=()):
    """Lists on stderr the keys of config.json that the layout neither reads nor knows to change
    nothing (HF_INERT, inert): one of them might matter, and a silently dropped setting gives a model
    that runs with wrong numbers."""
    unread = sorted(k for k in cfg if k not in read and k not in HF_INERT and k not in inert)
    if unread:
        print("convert: %s: config.json keys not read (they change nothing in the file written; check that "
              "none matters): %s" % (layout, ", ".join(unread)), file=sys.stderr)
    return unread


def check_unused(source, used, what):
    """Refuses any source tensor that the plan did not consume."""
    for name in source.names():
        if name not in used:
            raise ConvertError("%s: unknown tensor '%s' (shape %s) for the %s layout"
                               % (source.path, name, source.shape(name), what))


def expect_shape(source, name, shape):
    if name not in source.names():
        raise ConvertError("%s: missing tensor '%s'" % (source.path, name))
    if tuple(source.shape(name)) != tuple(shape):
        raise ConvertError("%s: tensor '%s' has shape %s, expected %s"
                           % (source.path, name, tuple(source.shape(name)), tuple(shape)))
