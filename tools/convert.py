#!/usr/bin/python3
"""Convert differential-attention checkpoints into one dintattn model file (docs/format.md section 2).

    /usr/bin/python3 tools/convert.py SOURCE OUT.safetensors
        [--format unilm|motif|diffllama|llama2c|diffv2|xtransformers|auto] [--dtype f32|f16|bf16]
        [--tokenizer FILE] [layout flags]
    /usr/bin/python3 tools/convert.py --format tokenizer SOURCE OUT.safetensors

SOURCE is one of
  - a Hugging Face model directory: config.json plus model.safetensors, or shards listed in
    model.safetensors.index.json (read here, tensor by tensor, with numpy.fromfile: no
    safetensors/transformers package is needed); its tokenizer.json is embedded automatically;
  - a single .safetensors file (config {} unless a config.json lies beside it);
  - a PyTorch state dict (.pt/.bin/.pth, via torch.load on the CPU; {"model": sd} and
    {"state_dict": sd} wrappers are unwrapped; torch is imported only for these);
  - a llama2.c checkpoint (fp32: the legacy 7-int32 header, or export.py's version 1 "ak42").
  With a .safetensors/.pt/.bin file, a config.json beside it is read as its config.
  --no-tokenizer embeds none; --LAYOUT-... flags are listed by --help.  --format auto (the
  default) picks the one layout the source matches; when none does, the error names, per layout,
  the tensor or config.json key that rules it out.

Layouts live in tools/layouts/NAME.py; each exports mismatch(source), plan(source, args) and
add_arguments(group) (tools/layouts/__init__.py).  plan() returns (config, [(spec_name, shape,
loader)]) and accounts for every source tensor; anything it does not fully understand raises
ConvertError, which this script prints as one line on stderr (exit 1).

Safetensors files are read and written with tools/safetensors_io.py.

The output is written header first, then tensor by tensor, so peak memory is about the largest
single tensor; it goes to OUT.tmp and is renamed to OUT at the end.

Tokenizer (--tokenizer FILE, or SOURCE/tokenizer.json): a tiktoken rank file is embedded as is
("type": "tiktoken").  An HF tokenizer.json with a BPE model, byte-level (GPT-2, Llama-3, Qwen2,
DeepSeek-V3) or SentencePiece-style (Llama-2, Gemma, Yi: byte fallback, "▁" for spaces), is
written as "type": "bpe" (docs/format.md section 5): the vocabulary as tensor tokenizer.ranks
("BASE64(bytes) ID" lines), the merges as tensor tokenizer.merges ("LEFT_ID RIGHT_ID" lines, in
file order), and the BPE model's fields, normalizer, pre-tokenizer, added tokens and decoder as
steps in the "tokenizer" metadata, which the C tokenizer applies as HF tokenizers does
(encode = add_special_tokens=False; the post-processor is not stored).  Supported: normalizers
NFC, Prepend, Replace (String); pre-tokenizers Split, ByteLevel, Digits, Metaspace; decoders
ByteLevel, Replace (String), ByteFallback, Fuse, Strip, Metaspace (alone); Sequence of each.  Any other
component or setting (NFKC, Lowercase, WordPiece/Unigram, dropout, a Split after ByteLevel, ...)
is refused by name.  Split regexes are Oniguruma's and stored verbatim, except `x{n,m}+`, which
Oniguruma reads as `(?:x{n,m})+` and is written so.  bos_id comes from config.json; every
end-of-sequence id (config.json's and generation_config.json's eos_token_id, int or list, and
tokenizer_config.json's eos_token) goes to "eos_ids" when there are several, the first being
"eos_id".

--format tokenizer SOURCE OUT: only the tokenizer, as a tokenizer-only file (metadata "format":
"dintattn-tokenizer", "version": "1", "tokenizer" and, from an HF directory, "chat"; no config).
SOURCE is a tokenizer.json, a tiktoken rank file, or an HF directory (its tokenizer.json, or
--tokenizer FILE, with config.json, generation_config.json and tokenizer_config.json for the
end-of-sequence ids and the chat template, as for a model; without a bos_token_id in config.json,
bos_id is tokenizer_config.json's bos_token).

Chat template (an HF directory's chat_template.jinja, or tokenizer_config.json's chat_template):
rendered with jinja2 as transformers' apply_chat_template renders it, on probe conversations, and
reduced to what dintattn_chat_format uses -- per role [prefix, suffix], the generation prompt, and
the assistant's end-of-turn special token as stop string -- stored as metadata "chat".  The parts
are checked against jinja2 on held-out conversations; a template whose text is not prefix +
content + suffix per message (position-dependent text, a default system message, rewritten
contents) is refused with the reason; --no-chat-template converts without it.
"""

import base64
import importlib
import json
import os
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
if __name__ == "__main__":
    # layout modules may `import convert`: let them get this module, not a second copy
    sys.modules.setdefault("convert", sys.modules[__name__])

FORMATS = ["unilm", "motif", "diffllama", "llama2c", "diffv2", "xtransformers"]



from layouts import ConvertError  # noqa: E402  (shared with the layout modules)
import cli  # noqa: E402
import safetensors_io  # noqa: E402  (tools/safetensors_io.py: the tools' one safetensors reader/writer)
import spec  # noqa: E402  (tools/spec.py: the format's rules the tools share)


# ---------------------------------------------------------------------------
# sources
# ---------------------------------------------------------------------------

def _safetensors_file(path):
    """safetensors_io.File(path), its errors as ConvertError."""
    try:
        return safetensors_io.File(path)
    except OSError as e:
        raise ConvertError("%s: %s" % (path, e.strerror or e))
    except safetensors_io.SafetensorsError as e:
        raise ConvertError(str(e))


class Source:
    """A checkpoint: config dict plus named tensors loaded one at a time as float32."""

    def __init__(self, path, config=None):
        self.path = path
        self.config = config or {}
        self._shapes = {}
        self._dtypes = {}

    def names(self):
        return list(self._shapes)

    def shape(self, name):
        return tuple(self._shapes[name])

    def dtype(self, name):
        return self._dtypes[name]

    def get(self, name):
        raise NotImplementedError


class SafetensorsSource(Source):
    """One or several safetensors files (HF shards) behind one name space."""

    def __init__(self, path, files, config=None):
        Source.__init__(self, path, config)
        self._where = {}
        self.metadata = {}
        for fpath in files:
            f = _safetensors_file(fpath)
            self.metadata.update(f.metadata)
            for name in f.names():
                if name in self._where:
                    raise ConvertError("tensor '%s' is in both %s and %s" % (name, self._where[name].path, fpath))
                self._where[name] = f
                self._shapes[name] = f.shape(name)
                self._dtypes[name] = f.dtype(name)

    def get(self, name):
        try:
            a = self._where[name].get(name)
        except safetensors_io.SafetensorsError as e:
            raise ConvertError(str(e))
        return a if a.dtype == np.float32 else a.astype(np.float32)


def _hf_dir_source(path):
    cfg_path = os.path.join(path, "config.json")
    config = {}
    if os.path.exists(cfg_path):
        try:
            with open(cfg_path) as f:
                config = json.load(f)
        except ValueError as e:
            raise ConvertError("%s: %s" % (cfg_path, e))
    index = os.path.join(path, "model.safetensors.index.json")
    single = os.path.join(path, "model.safetensors")
    if os.path.exists(index):
        try:
            with open(index) as f:
                wm = json.load(f)["weight_map"]
        except (ValueError, KeyError) as e:
            raise ConvertError("%s: no weight_map (%s)" % (index, e))
        files = sorted(set(os.path.join(path, v) for v in wm.values()))
        for fp in files:
            if not os.path.exists(fp):
                raise ConvertError("%s names shard %s, which is missing" % (index, fp))
        src = SafetensorsSource(path, files, config)
        missing = [n for n in wm if n not in src._shapes]
        if missing:
            raise ConvertError("%s lists tensor '%s' but no shard holds it" % (index, missing[0]))
        return src
    if os.path.exists(single):
        return SafetensorsSource(path, [single], config)
    for name in ("pytorch_model.bin", "model.pt", "consolidated.00.pth"):
        p = os.path.join(path, name)
        if os.path.exists(p):
            src = TorchSource(p)
            src.config = config
            src.path = path
            return src
    raise ConvertError("%s: no model.safetensors, model.safetensors.index.json or pytorch_model.bin" % path)


TORCH_DTYPES = {"float64": "F64", "float32": "F32", "float16": "F16", "bfloat16": "BF16", "int64": "I64",
                "int32": "I32", "int16": "I16", "int8": "I8", "uint8": "U8", "bool": "BOOL"}


class TorchSource(Source):
    """A PyTorch state dict; dtype() answers in safetensors' names (F32, BF16, ...)."""

    def __init__(self, path):
        Source.__init__(self, path)
        try:
            import torch  # noqa: F401  (only PyTorch state dicts need it)
        except ImportError:
            raise ConvertError("%s: reading a PyTorch state dict needs torch (Debian: python3-torch)" % path)
        try:
            try:   # torch >= 2.1 can map the file instead of reading it all into memory
                obj = torch.load(path, map_location="cpu", mmap=True)
            except TypeError:
                obj = torch.load(path, map_location="cpu")
            except RuntimeError:   # mmap needs the zip format; legacy pickles load whole
                obj = torch.load(path, map_location="cpu")
        except Exception as e:  # torch raises many kinds
            raise ConvertError("%s: torch.load failed: %s" % (path, e))
        for key in ("model", "state_dict", "module"):
            if isinstance(obj, dict) and isinstance(obj.get(key), dict):
                obj = obj[key]
                break
        if not isinstance(obj, dict):
            raise ConvertError("%s: not a state dict (got %s)" % (path, type(obj).__name__))
        self._sd = {}
        for k, v in obj.items():
            if not hasattr(v, "shape"):
                raise ConvertError("%s: entry '%s' is not a tensor" % (path, k))
            self._sd[k] = v
            self._shapes[k] = tuple(int(s) for s in v.shape)
            dt = str(v.dtype).replace("torch.", "")
            self._dtypes[k] = TORCH_DTYPES.get(dt, dt)

    def get(self, name):
        import torch
        t = self._sd[name]
        return t.detach().to(torch.float32).cpu().numpy().reshape(self._shapes[name])


LLAMA2C_FIELDS = ["dim", "hidden_dim", "n_layers", "n_heads", "n_kv_heads", "vocab_size", "seq_len"]


class Llama2cSource(Source):
    """llama2.c checkpoint, fp32: the legacy export (7 int32 header, run.c's order) or the
    version-1 export (256-byte header: magic "ak42", version 1, 7 int32, shared-classifier byte;
    norms first).  Version 2 (int8 Q8_0, runq.c) is refused.

    Tensor names are run.c's field names: token_embedding_table [V,D], rms_att_weight [L,D],
    wq [L,H*hs,D], wk [L,KV*hs,D], wv [L,KV*hs,D], wo [L,D,H*hs], rms_ffn_weight [L,D],
    w1 [L,F,D], w2 [L,D,F], w3 [L,F,D], rms_final_weight [D], freq_cis_real [S,hs/2] and
    freq_cis_imag [S,hs/2] (legacy only), wcls [V,D] (untied classifier only)."""

    def __init__(self, path):
        Source.__init__(self, path)
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            head = f.read(256)
        if len(head) < 28:
            raise ConvertError("%s: too short for a llama2.c checkpoint" % path)
        if struct.unpack("<I", head[:4])[0] == 0x616B3432:   # "ak42" as a little-endian uint32
            if len(head) < 256:
                raise ConvertError("%s: llama2.c version header is truncated" % path)
            (version,) = struct.unpack("<i", head[4:8])
            if version != 1:
                raise ConvertError("%s: llama2.c export version %d is not supported (only the fp32 legacy "
                                   "and version-1 exports; version 2 is int8-quantized)" % (path, version))
            vals = struct.unpack("<7i", head[8:36])
            shared = head[36] != 0
            start = 256
            if vals[5] <= 0:
                raise ConvertError("%s: llama2.c version-1 header has vocab_size %d" % (path, vals[5]))
        else:
            version = 0
            vals = struct.unpack("<7i", head[:28])
            shared = vals[5] > 0
            start = 28
        cfg = dict(zip(LLAMA2C_FIELDS, vals))
        cfg["vocab_size"] = abs(cfg["vocab_size"])
        cfg["shared_weights"] = shared
        cfg["llama2c_version"] = version
        D, F, L, H, KV, V, S = (cfg[k] for k in LLAMA2C_FIELDS)
        if min(D, F, L, H, KV, V, S) <= 0 or D > 1 << 16 or L > 4096 or H > 4096 or S > 1 << 24:
            raise ConvertError("%s: not a safetensors file, a PyTorch state dict or a llama2.c checkpoint "
                               "(as llama2.c, its header %s is not plausible)" % (path, vals))
        if D % H:
            raise ConvertError("%s: llama2.c dim %d is not a multiple of n_heads %d" % (path, D, H))
        if H % KV:
            raise ConvertError("%s: llama2.c n_heads %d is not a multiple of n_kv_heads %d" % (path, H, KV))
        hs = D // H
        if hs % 2:
            raise ConvertError("%s: llama2.c head size %d is odd (RoPE needs pairs)" % (path, hs))
        self.config = cfg
        emb = ("token_embedding_table", (V, D))
        norms = [("rms_att_weight", (L, D)), ("rms_ffn_weight", (L, D)), ("rms_final_weight", (D,))]
        attn = [("wq", (L, H * hs, D)), ("wk", (L, KV * hs, D)), ("wv", (L, KV * hs, D)), ("wo", (L, D, H * hs))]
        ffn = [("w1", (L, F, D)), ("w2", (L, D, F)), ("w3", (L, F, D))]
        if version == 0:
            layout = [emb, norms[0]] + attn + [norms[1]] + ffn + [norms[2], ("freq_cis_real", (S, hs // 2)),
                                                                  ("freq_cis_imag", (S, hs // 2))]
        else:
            layout = norms + [emb] + attn + ffn
        if not shared:
            layout.append(("wcls", (V, D)))
        self._off = {}
        off = start
        for name, shape in layout:
            self._off[name] = off
            self._shapes[name] = shape
            self._dtypes[name] = "F32"
            off += 4 * int(np.prod(shape))
        if off != size:
            raise ConvertError("%s: llama2.c header %s needs %d bytes of weights%s, the file has %d"
                               % (path, vals, off, "" if shared else " (untied classifier)", size))

    def get(self, name):
        shape = self._shapes[name]
        n = int(np.prod(shape))
        return np.fromfile(self.path, dtype="<f4", count=n, offset=self._off[name]).astype(np.float32).reshape(shape)

    def get_layer(self, name, l):
        """Block l of a per-layer [L, ...] tensor, read alone."""
        shape = self._shapes[name][1:]
        n = int(np.prod(shape))
        return np.fromfile(self.path, dtype="<f4", count=n, offset=self._off[name] + 4 * n * l
                           ).astype(np.float32).reshape(shape)


def open_source(path):
    if os.path.isdir(path):
        return _hf_dir_source(path)
    if not os.path.exists(path):
        raise ConvertError("%s: no such file or directory" % path)
    with open(path, "rb") as f:
        head = f.read(8)
    low = path.lower()
    cfg = {}
    cj = os.path.join(os.path.dirname(os.path.abspath(path)), "config.json")
    if os.path.exists(cj) and low.endswith((".safetensors", ".pt", ".pth", ".bin")):
        try:
            with open(cj) as f:
                cfg = json.load(f)
        except ValueError as e:
            raise ConvertError("%s: %s" % (cj, e))
    if low.endswith(".safetensors"):
        return SafetensorsSource(path, [path], cfg)
    # PyTorch zip archives start with PK\3\4; anything else is tried as a llama2.c checkpoint
    # first (its header is checked against the file size), then as a legacy torch pickle
    if head[:4] == b"PK\x03\x04" or low.endswith((".pt", ".pth")):
        src = TorchSource(path)
        src.config = cfg
        return src
    try:
        return Llama2cSource(path)
    except ConvertError:
        if head[:1] == b"\x80":
            src = TorchSource(path)
            src.config = cfg
            return src
        raise


# ---------------------------------------------------------------------------
# writer
# ---------------------------------------------------------------------------

OUT_DTYPES = spec.WEIGHT_DTYPES


CHUNK = 1 << 22   # elements encoded and written at a time


def _encode(st_dtype, chunk, name):
    """Encodes one chunk (1-D, finite float32) of tensor `name`; refuses values F16 cannot hold."""
    if st_dtype == "F16" and chunk.size and float(np.max(np.abs(chunk))) > 65504:
        raise ConvertError("tensor '%s' has values beyond f16's range; use --dtype bf16 or f32" % name)
    return safetensors_io.encode(st_dtype, chunk)


def write_spec(path, config, tensors, dtype="f32", tokenizer=None, chat=None):
    """Writes a dintattn model file (docs/format.md section 2). tensors: [(name, shape, loader)] with loader() -> array of shape;
    tokenizer: None or (tok_tensors, metadata_dict), tok_tensors a list of (name, bytes) U8
    tensors (tokenizer.ranks, tokenizer.merges) or one rank file's bytes; chat: None or the "chat"
    metadata dict.  config None writes a tokenizer-only file (format "dintattn-tokenizer").
    Streams one tensor at a time."""
    if dtype not in OUT_DTYPES:
        raise ConvertError("unknown --dtype %r (f32, f16 or bf16)" % dtype)
    st = OUT_DTYPES[dtype]
    if config is None:
        meta = {"format": "dintattn-tokenizer", "version": "1"}
    else:
        version = spec.file_version(config)
        meta = {"format": "dintattn", "version": version, "config": json.dumps(config, sort_keys=True)}
    tok_tensors = []
    if tokenizer is not None:
        tok_tensors = tokenizer[0]
        if isinstance(tok_tensors, (bytes, bytearray)):
            tok_tensors = [("tokenizer.ranks", bytes(tok_tensors))]
    entries = []
    seen = set()
    for name, shape, _ in tensors:
        if name in seen:
            raise ConvertError("internal: tensor '%s' planned twice" % name)
        seen.add(name)
        entries.append((name, st, shape))
    for name, data in tok_tensors:
        if name in seen:
            raise ConvertError("internal: tensor '%s' planned twice" % name)
        seen.add(name)
        entries.append((name, "U8", [len(data)]))
    if tokenizer is not None:
        meta["tokenizer"] = json.dumps(tokenizer[1], ensure_ascii=False)
    if chat is not None:
        meta["chat"] = json.dumps(chat, ensure_ascii=False)
    # data 64-byte aligned, JSON with spaces after separators and in UTF-8 (the files this
    # converter has always written)
    head = safetensors_io.header_bytes(entries, meta, align=64, separators=(", ", ": "), ensure_ascii=False)
    tmp = path + ".tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(head)
            for name, shape, loader in tensors:
                arr = np.asarray(loader())
                if tuple(arr.shape) != tuple(int(s) for s in shape):
                    raise ConvertError("internal: tensor '%s' came out %s, planned %s"
                                       % (name, tuple(arr.shape), tuple(shape)))
                flat = arr.reshape(-1)
                for i in range(0, flat.size, CHUNK):
                    chunk = flat[i:i + CHUNK]
                    if chunk.dtype != np.float32:
                        chunk = chunk.astype(np.float32)
                    if not np.all(np.isfinite(chunk)):
                        raise ConvertError("tensor '%s' holds NaN or Inf (or values beyond f32)" % name)
                    f.write(_encode(st, chunk, name))
                del arr, flat
            for name, data in tok_tensors:
                f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


# ---------------------------------------------------------------------------
# tokenizer
# ---------------------------------------------------------------------------

def bytes_to_unicode():
    """GPT-2's byte -> printable character table."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1)) + \
        list(range(ord("\xae"), ord("\xff") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def _warn(msg):
    sys.stderr.write("convert: warning: %s\n" % msg)


# The HF tokenizer.json model, normalizer, pre-tokenizer and decoder components the C tokenizer
# implements exactly (the "bpe" format of docs/format.md section 5); anything else is refused
# by name, never approximated.
SPLIT_BEHAVIORS = ("Isolated", "Removed", "MergedWithPrevious", "MergedWithNext", "Contiguous")
TOKENIZER_JSON_KEYS = ("version", "truncation", "padding", "added_tokens", "normalizer", "pre_tokenizer",
                       "post_processor", "decoder", "model")
BPE_MODEL_KEYS = ("type", "dropout", "unk_token", "continuing_subword_prefix", "end_of_word_suffix",
                  "fuse_unk", "byte_fallback", "ignore_merges", "vocab", "merges")
ADDED_TOKEN_FLAGS = ("special", "lstrip", "rstrip", "normalized", "single_word")

_COUNTED = None


def _regex_escape_end(rx, i):
    """End of the escape sequence starting at rx[i] == '\\'."""
    if i + 1 >= len(rx):
        raise ConvertError("ends with a lone backslash")
    c = rx[i + 1]
    if c in "xpPu" and i + 2 < len(rx) and rx[i + 2] == "{" and c != "u":
        j = rx.find("}", i + 3)
        if j < 0:
            raise ConvertError("unterminated \\%s{ at offset %d" % (c, i))
        return j + 1
    if c == "x":
        return i + 4
    if c == "u":
        return i + 6
    if c in "pP":          # \pL: a one-letter property
        return i + 3
    return i + 2


def _regex_class_end(rx, i):
    """End of the character class starting at rx[i] == '[' (classes may nest, Oniguruma-style)."""
    depth, j = 0, i
    while j < len(rx):
        c = rx[j]
        if c == "\\":
            j = _regex_escape_end(rx, j)
            continue
        if c == "[":
            depth += 1
            j += 1
            if j < len(rx) and rx[j] == "^":
                j += 1
            if j < len(rx) and rx[j] == "]":   # a leading ']' is literal
                j += 1
            continue
        if c == "]":
            depth -= 1
            j += 1
            if depth == 0:
                return j
            continue
        j += 1
    raise ConvertError("unterminated character class at offset %d" % i)


def oniguruma_regex(rx):
    """An Oniguruma (tokenizer.json) regex -> the C matcher's reading of the same matches.  Only
    one construct reads differently: Oniguruma's Ruby syntax reads a counted repeat followed by
    '+', `x{n,m}+` (and `x{n}+`, `x{n,}+`), as `(?:x{n,m})+`, where the C matcher (like tiktoken's
    patterns) would read it as possessive; it is rewritten to the explicit group.  A rewrite that
    would repeat something that can match the empty string (n = 0) is refused."""
    import re
    global _COUNTED
    if _COUNTED is None:
        _COUNTED = re.compile(r"\{(\d+)(?:,(\d*))?\}")
    inserts = []   # (position, text), applied from the end
    stack, atom, i, n = [], None, 0, len(rx)
    while i < n:
        c = rx[i]
        if c == "\\":
            atom, i = i, _regex_escape_end(rx, i)
        elif c == "[":
            atom, i = i, _regex_class_end(rx, i)
        elif c == "(":
            stack.append(i)
            atom, i = None, i + 1
        elif c == ")":
            if not stack:
                raise ConvertError("unbalanced ')' at offset %d" % i)
            atom, i = stack.pop(), i + 1
        elif c == "|":
            atom, i = None, i + 1
        elif c == "{" and _COUNTED.match(rx, i):
            m = _COUNTED.match(rx, i)
            j = m.end()
            if j < n and rx[j] == "+":
                if atom is None:
                    raise ConvertError("a counted repeat at offset %d follows nothing" % i)
                if int(m.group(1)) == 0:
                    raise ConvertError("%s+ at offset %d means (?:%s%s)+ in Oniguruma, a repeat of "
                                       "something that can match the empty string, which the C "
                                       "matcher refuses" % (m.group(0), i, rx[atom:i], m.group(0)))
                inserts.append((atom, "(?:"))
                inserts.append((j, ")"))
                i = j + 1    # the '+' stays, now after the group; the group is the atom
            else:
                i = j
        elif c in "*+?":
            i += 1
        else:
            atom, i = i, i + 1
    if stack:
        raise ConvertError("unbalanced '(' at offset %d" % stack[-1])
    for pos, text in sorted(inserts, key=lambda x: x[0], reverse=True):
        rx = rx[:pos] + text + rx[pos:]
    return rx


def _string_regex(s):
    """A literal string as a regex of \\x{HHHH} escapes."""
    return "".join("\\x{%X}" % ord(c) for c in s)


def _hf_type(d, where, what):
    if not isinstance(d, dict) or not isinstance(d.get("type"), str):
        raise ConvertError("%s: %s is not an object with a \"type\"" % (where, what))
    return d["type"]


def _flag(d, key, default, where):
    v = d.get(key, default)
    if v is None:
        v = default
    if not isinstance(v, bool):
        raise ConvertError("%s: %r is not true or false" % (where, key))
    return v


def _hf_normalizer(nz, what, out):
    if nz is None:
        return out
    t = _hf_type(nz, what, "normalizer")
    if t == "Sequence":
        for sub in nz.get("normalizers") or []:
            _hf_normalizer(sub, what, out)
    elif t == "NFC":
        out.append("nfc")
    elif t == "Prepend":
        if not isinstance(nz.get("prepend"), str):
            raise ConvertError("%s: normalizer Prepend has no \"prepend\" string" % what)
        out.append({"prepend": nz["prepend"]})
    elif t == "Replace":
        pat = nz.get("pattern") or {}
        if "String" not in pat:
            raise ConvertError("%s: normalizer Replace with a %s pattern is not supported (only String)"
                               % (what, "/".join(pat) or "missing"))
        if not isinstance(pat["String"], str) or not pat["String"] or not isinstance(nz.get("content"), str):
            raise ConvertError("%s: normalizer Replace needs a non-empty String pattern and a content string" % what)
        out.append({"replace": [pat["String"], nz["content"]]})
    else:
        raise ConvertError("%s: normalizer %s is not supported" % (what, t))
    return out


def _hf_pre_tokenizer(pt, what, out, state):
    """Appends the format's steps for HF pre-tokenizer pt; state["byte_level"] is set once a
    ByteLevel step has been seen (nothing that splits may follow it)."""
    if pt is None:
        return out
    t = _hf_type(pt, what, "pre_tokenizer")
    if t == "Sequence":
        for sub in pt.get("pretokenizers") or []:
            _hf_pre_tokenizer(sub, what, out, state)
        return out
    if state["byte_level"]:
        raise ConvertError("%s: pre_tokenizer %s after ByteLevel is not supported (it would see GPT-2's "
                           "byte alphabet, not the text)" % (what, t))
    if t == "Split":
        pat = pt.get("pattern") or {}
        if "Regex" in pat and isinstance(pat["Regex"], str):
            try:
                rx = oniguruma_regex(pat["Regex"])
            except ConvertError as e:
                raise ConvertError("%s: pre_tokenizer Split regex %r: %s" % (what, pat["Regex"], e))
        elif "String" in pat and isinstance(pat["String"], str) and pat["String"]:
            rx = _string_regex(pat["String"])
        else:
            raise ConvertError("%s: pre_tokenizer Split pattern %r is not supported (a Regex or a non-empty String)"
                               % (what, pat))
        behavior = pt.get("behavior", "Isolated")
        if behavior not in SPLIT_BEHAVIORS:
            raise ConvertError("%s: pre_tokenizer Split behavior %r is not supported" % (what, behavior))
        invert = _flag(pt, "invert", False, what + ": pre_tokenizer Split")
        out.append(rx if behavior == "Isolated" and not invert else
                   {"regex": rx, "behavior": behavior, "invert": invert})
    elif t == "ByteLevel":
        state["byte_level"] = True
        out.append({"byte_level": {"add_prefix_space": _flag(pt, "add_prefix_space", True, what + ": ByteLevel"),
                                   "use_regex": _flag(pt, "use_regex", True, what + ": ByteLevel")}})
    elif t == "Digits":
        ind = _flag(pt, "individual_digits", False, what + ": pre_tokenizer Digits")
        out.append({"regex": "\\p{N}" if ind else "\\p{N}+"})
    elif t == "Metaspace":
        repl = pt.get("replacement", "\u2581")
        if not isinstance(repl, str) or len(repl) != 1:
            raise ConvertError("%s: pre_tokenizer Metaspace replacement %r is not one character" % (what, repl))
        out.append({"metaspace": repl, "prepend_scheme": _prepend_scheme(pt, what + ": pre_tokenizer Metaspace"),
                    "split": _flag(pt, "split", True, what + ": pre_tokenizer Metaspace")})
    else:
        raise ConvertError("%s: pre_tokenizer %s is not supported" % (what, t))
    return out


def _prepend_scheme(d, where):
    """HF Metaspace's prepend_scheme; files before tokenizers 0.19 have add_prefix_space instead
    (true = always, false = never), as tokenizers reads them."""
    scheme = d.get("prepend_scheme")
    if scheme is not None and scheme not in ("always", "first", "never"):
        raise ConvertError("%s: prepend_scheme %r is not supported" % (where, scheme))
    aps = d.get("add_prefix_space")
    if aps is not None and not isinstance(aps, bool):
        raise ConvertError("%s: add_prefix_space is not true or false" % where)
    if aps is False:
        if scheme not in (None, "never"):
            raise ConvertError("%s: add_prefix_space false contradicts prepend_scheme %r" % (where, scheme))
        return "never"
    return scheme or "always"


def _hf_decoder(dec, what, out, state):
    if dec is None:
        return out
    t = _hf_type(dec, what, "decoder")
    if t == "Sequence":
        for sub in dec.get("decoders") or []:
            _hf_decoder(sub, what, out, state)
        return out
    if "fuse" in out and t != "Strip":
        raise ConvertError("%s: decoder %s after Fuse is not supported (only Strip may follow it)" % (what, t))
    if t == "ByteLevel":
        state["byte_level"] = True
        if out:
            raise ConvertError("%s: decoder ByteLevel after other decoders is not supported" % what)
        return out
    if state["byte_level"]:
        raise ConvertError("%s: decoder %s after ByteLevel is not supported" % (what, t))
    if t == "Replace":
        pat = dec.get("pattern") or {}
        if "String" not in pat:
            raise ConvertError("%s: decoder Replace with a %s pattern is not supported (only String)"
                               % (what, "/".join(pat) or "missing"))
        if not isinstance(pat["String"], str) or not pat["String"] or not isinstance(dec.get("content"), str):
            raise ConvertError("%s: decoder Replace needs a non-empty String pattern and a content string" % what)
        out.append({"replace": [pat["String"], dec["content"]]})
    elif t == "ByteFallback":
        out.append("byte_fallback")
    elif t == "Fuse":
        out.append("fuse")
    elif t == "Strip":
        c, a, b = dec.get("content"), dec.get("start"), dec.get("stop")
        if not (isinstance(c, str) and len(c) == 1 and isinstance(a, int) and isinstance(b, int)
                and not isinstance(a, bool) and not isinstance(b, bool) and a >= 0 and b >= 0):
            raise ConvertError("%s: decoder Strip needs a one-character content and counts start, stop" % what)
        out.append({"strip": [c, a, b]})
    elif t == "Metaspace":
        repl = dec.get("replacement", "\u2581")
        if not isinstance(repl, str) or len(repl) != 1:
            raise ConvertError("%s: decoder Metaspace replacement %r is not one character" % (what, repl))
        if _prepend_scheme(dec, what + ": decoder Metaspace") == "never":
            out.append({"replace": [repl, " "]})
        else:
            # each replacement a space, except in the first token, where every one goes (not only
            # a leading one: Replace + Fuse + Strip would differ on a first token "▁▁▁")
            out.append({"metaspace": repl})
    else:
        raise ConvertError("%s: decoder %s is not supported" % (what, t))
    return out


def hf_tokenizer_to_bpe(tj, config, what="tokenizer.json"):
    """HF tokenizer.json (parsed) -> ([(tensor name, bytes)], tokenizer metadata dict) of the "bpe"
    format: the vocabulary as rank-file lines "BASE64(bytes) ID", the merges as "LEFT_ID RIGHT_ID"
    lines in file order, and the normalizer, pre-tokenizer, added tokens and decoder as steps the
    C tokenizer applies exactly as HF does; any component it does not implement is refused."""
    if not isinstance(tj, dict):
        raise ConvertError("%s: not a JSON object" % what)
    for k in tj:
        if k not in TOKENIZER_JSON_KEYS:
            raise ConvertError("%s: key %r is not supported" % (what, k))
    model = tj.get("model")
    mtype = model.get("type") if isinstance(model, dict) else None
    if mtype is None and isinstance(model, dict) and "vocab" in model and "merges" in model:
        mtype = "BPE"    # very old files leave out the model's type
    if mtype != "BPE":
        raise ConvertError("%s: model %s is not supported (only BPE)" % (what, mtype))
    for k in model:
        if k not in BPE_MODEL_KEYS:
            raise ConvertError("%s: BPE model field %r is not supported" % (what, k))
    if model.get("dropout") not in (None, 0, 0.0):
        raise ConvertError("%s: BPE dropout %s is not supported" % (what, model["dropout"]))
    for k in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(k) not in (None, ""):
            raise ConvertError("%s: BPE %s %r is not supported" % (what, k, model[k]))
    flags = {k: _flag(model, k, False, what + ": BPE model") for k in ("fuse_unk", "byte_fallback", "ignore_merges")}

    normalizer = _hf_normalizer(tj.get("normalizer"), what, [])
    pstate = {"byte_level": False}
    pre = _hf_pre_tokenizer(tj.get("pre_tokenizer"), what, [], pstate)
    dstate = {"byte_level": False}
    decoder = _hf_decoder(tj.get("decoder"), what, [], dstate)
    if len(decoder) > 1 and any(isinstance(d, dict) and "metaspace" in d for d in decoder):
        raise ConvertError("%s: decoder Metaspace combined with other decoders is not supported" % what)
    byte_level = pstate["byte_level"]
    if tj.get("decoder") is None:
        raise ConvertError("%s: no decoder (HF then joins tokens with spaces) is not supported" % what)
    if byte_level != dstate["byte_level"]:
        raise ConvertError("%s: a ByteLevel %s without a ByteLevel %s is not supported"
                           % (what, *(("pre_tokenizer", "decoder") if byte_level else ("decoder", "pre_tokenizer"))))

    vocab = model.get("vocab")
    if not isinstance(vocab, dict) or not vocab:
        raise ConvertError("%s: BPE model has no vocab" % what)
    added_list = tj.get("added_tokens") or []
    added_text = {a.get("content") for a in added_list if isinstance(a, dict)}
    if byte_level:
        u2b = {c: b for b, c in bytes_to_unicode().items()}
    tok_bytes, ids = {}, {}
    for tok, i in vocab.items():
        if not isinstance(i, int) or isinstance(i, bool) or i < 0:
            raise ConvertError("%s: vocab id of %r is not a non-negative integer" % (what, tok))
        if i in ids:
            raise ConvertError("%s: vocab tokens %r and %r have the same id %d" % (what, ids[i], tok, i))
        ids[i] = tok
        if byte_level:
            try:
                bts = bytes(u2b[c] for c in tok)
            except KeyError:
                if tok not in added_text:
                    raise ConvertError("%s: vocab token %r (id %d) is not in the byte-level alphabet" % (what, tok, i))
                bts = tok.encode("utf-8")   # an added token's text, as HF's ByteLevel decoder gives it
        else:
            bts = tok.encode("utf-8")
        if not bts:
            raise ConvertError("%s: vocab token %d is empty" % (what, i))
        tok_bytes[tok] = bts
    if byte_level:
        have = {b for b in tok_bytes.values() if len(b) == 1}
        for b in range(256):
            if bytes([b]) not in have:
                raise ConvertError("%s: byte-level BPE without a token for the byte 0x%02X" % (what, b))
    unk = model.get("unk_token")
    unk_id = -1
    if unk is not None:
        if unk not in vocab:
            raise ConvertError("%s: unk_token %r is not in the vocab" % (what, unk))
        unk_id = vocab[unk]

    merge_lines = []
    for k, m in enumerate(model.get("merges") or []):
        if isinstance(m, str):
            parts = m.split(" ")
        elif isinstance(m, list) and all(isinstance(x, str) for x in m):
            parts = m
        else:
            parts = None
        if not parts or len(parts) != 2:
            raise ConvertError("%s: merge %d %r is not two tokens" % (what, k, m))
        a, b = parts
        for x in (a, b, a + b):
            if x not in vocab:
                raise ConvertError("%s: merge %d (%r + %r): %r is not in the vocab" % (what, k, a, b, x))
        merge_lines.append("%d %d\n" % (vocab[a], vocab[b]))

    added = []
    given = {}    # content -> id, as HF tokenizers assigns them
    for a in added_list:
        if not isinstance(a, dict) or not isinstance(a.get("content"), str) or not a["content"] \
                or not isinstance(a.get("id"), int) or isinstance(a.get("id"), bool) or a["id"] < 0:
            raise ConvertError("%s: added token %r is not {id, content, ...}" % (what, a))
        if a["content"] in given:
            raise ConvertError("%s: added token %r is listed twice" % (what, a["content"]))
        if a["content"] in vocab and vocab[a["content"]] != a["id"]:
            raise ConvertError("%s: added token %r has id %d but vocab id %d" % (what, a["content"], a["id"],
                                                                                vocab[a["content"]]))
        # HF tokenizers does not take a new added token's id from the file: it gives it the
        # vocabulary's size, or one more than the largest added id once that is beyond it
        # (AddedVocabulary::add_tokens), and only warns when the file says otherwise
        if a["content"] in vocab:
            hf_id = vocab[a["content"]]
        elif not given:
            hf_id = len(vocab)
        else:
            top = max(given.values())
            hf_id = top + 1 if top >= len(vocab) else len(vocab)
        if hf_id != a["id"]:
            raise ConvertError("%s: added token %r has id %d, but HF tokenizers gives it id %d (added tokens "
                               "not in the vocab must follow it in order)" % (what, a["content"], a["id"], hf_id))
        given[a["content"]] = hf_id
        if a["content"] not in vocab and a["id"] in ids:
            raise ConvertError("%s: added token %r has id %d, vocab token %r's" % (what, a["content"], a["id"],
                                                                                   ids[a["id"]]))
        e = {"id": a["id"], "content": a["content"]}
        for f in ADDED_TOKEN_FLAGS:
            e[f] = _flag(a, f, f == "normalized" and not a.get("special"), "%s: added token %r" % (what, a["content"]))
        added.append(e)

    lines = [base64.b64encode(tok_bytes[tok]).decode("ascii") + " " + str(i) for i, tok in sorted(ids.items())]
    tensors = [("tokenizer.ranks", ("\n".join(lines) + "\n").encode("ascii"))]
    if merge_lines:
        tensors.append(("tokenizer.merges", "".join(merge_lines).encode("ascii")))
    meta = {"type": "bpe", "byte_level": byte_level, "unk_id": unk_id, "fuse_unk": flags["fuse_unk"],
            "byte_fallback": flags["byte_fallback"], "ignore_merges": flags["ignore_merges"],
            "normalizer": normalizer, "pre_tokenizer": pre, "added_tokens": added, "decoder": decoder,
            "bos_id": _tok_id(config, "bos_token_id"), "eos_id": _tok_id(config, "eos_token_id")}
    return tensors, meta


def special_token_ids(tok_meta):
    """{text: id} of a tokenizer metadata dict's special tokens: "special_tokens" of a tiktoken
    one, the special "added_tokens" of a bpe one."""
    ids = dict(tok_meta.get("special_tokens") or {})
    for a in tok_meta.get("added_tokens") or []:
        if a.get("special"):
            ids.setdefault(a["content"], a["id"])
    return ids


def tokenizer_max_id(tensors, tok_meta):
    """The largest token id a tokenizer (tensors, metadata) uses."""
    top = -1
    for name, data in tensors:
        if name == "tokenizer.ranks":
            top = max([top] + [int(line.split()[1]) for line in data.splitlines() if line.strip()])
    ids = list(special_token_ids(tok_meta).values()) + [a["id"] for a in tok_meta.get("added_tokens") or []]
    return max([top] + ids)


def _tok_id(config, key):
    v = config.get(key)
    if isinstance(v, list):
        v = v[0] if v else None
    return int(v) if isinstance(v, int) else -1


def load_tokenizer(path, config):
    """A tokenizer.json or tiktoken rank file -> ([(tensor name, bytes)], metadata dict)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ConvertError("%s: %s" % (path, e.strerror or e))
    if data.lstrip()[:1] == b"{":
        try:
            tj = json.loads(data.decode("utf-8"))
        except ValueError as e:
            raise ConvertError("%s: %s" % (path, e))
        return hf_tokenizer_to_bpe(tj, config, path)
    # a tiktoken rank file: check its lines
    ids = set()
    for k, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        try:
            if len(parts) != 2:
                raise ValueError
            base64.b64decode(parts[0], validate=True)
            ids.add(int(parts[1]))
        except ValueError:
            raise ConvertError("%s line %d: not 'base64 rank' (neither tokenizer.json nor a tiktoken rank file)"
                               % (path, k))
    meta = {"type": "tiktoken", "pattern": "cl100k", "special_tokens": {},
            "bos_id": _tok_id(config, "bos_token_id"), "eos_id": _tok_id(config, "eos_token_id")}
    return [("tokenizer.ranks", data)], meta


# ---------------------------------------------------------------------------
# chat template and end-of-sequence ids
# ---------------------------------------------------------------------------

# What C formats (dintattn_chat_format): each message as PREFIX[role] + content + SUFFIX[role],
# then the generation prompt.  A checkpoint's Jinja template is reduced to those parts by
# rendering it with jinja2 as transformers' apply_chat_template does, on conversations whose
# contents are markers, and cutting the text at the markers; the parts are then checked by
# re-rendering other conversations both ways.  A template that does not reduce exactly (text
# that depends on the message's position, a default system message, contents rewritten) is
# refused with the reason, never approximated; --no-chat-template converts without it.

CHAT_ROLES = ("system", "user", "assistant")
SPECIAL_TOKEN_KEYS = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")


def _read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise ConvertError("%s: %s" % (path, e.strerror or e))
    except ValueError as e:
        raise ConvertError("%s: %s" % (path, e))


def _token_text(v):
    """A tokenizer_config.json special token: a string or an AddedToken dict {"content": ...}."""
    if isinstance(v, dict):
        v = v.get("content")
    return v if isinstance(v, str) else None


def find_chat_template(d):
    """(template text, where it came from) of HF directory d, or (None, None).  chat_template.jinja
    wins over tokenizer_config.json's "chat_template" (a string, or a list of {name, template} of
    which "default" is used), as in transformers; then chat_template.json's."""
    jpath = os.path.join(d, "chat_template.jinja")
    if os.path.exists(jpath):
        try:
            with open(jpath, encoding="utf-8") as f:
                return f.read(), jpath
        except (OSError, UnicodeDecodeError) as e:
            raise ConvertError("%s: %s" % (jpath, getattr(e, "strerror", None) or e))
    for name in ("tokenizer_config.json", "chat_template.json"):
        path = os.path.join(d, name)
        if not os.path.exists(path):
            continue
        t = _read_json(path).get("chat_template")
        if t is None:
            continue
        if isinstance(t, list):
            named = {e.get("name"): e.get("template") for e in t if isinstance(e, dict)}
            if "default" not in named:
                raise ConvertError("%s: chat_template lists templates %s but none named 'default'"
                                   % (path, sorted(str(k) for k in named)))
            t = named["default"]
        if not isinstance(t, str):
            raise ConvertError("%s: chat_template is not a string" % path)
        return t, path
    return None, None


class ChatTemplate:
    """A Jinja chat template compiled as transformers compiles it: an ImmutableSandboxedEnvironment
    with trim_blocks and lstrip_blocks, the loopcontrols extension and {% generation %} blocks
    (rendered as their body), the tojson filter (no ASCII escaping) and the raise_exception and
    strftime_now functions; rendered with messages, add_generation_prompt, tools=None,
    documents=None and the tokenizer's special tokens (bos_token, eos_token, ...)."""

    def __init__(self, text, special_tokens, where="chat template"):
        try:
            import jinja2
            import jinja2.ext
            import jinja2.sandbox
        except ImportError:
            raise ConvertError("%s: reading a chat template needs jinja2 (Debian: python3-jinja2); "
                               "--no-chat-template converts without it" % where)
        self.where = where
        self.used_clock = False
        self.errors = (jinja2.TemplateError, TypeError, ValueError, KeyError, IndexError, AttributeError,
                       ZeroDivisionError, RecursionError)

        class Generation(jinja2.ext.Extension):
            tags = {"generation"}

            def parse(self, parser):
                lineno = next(parser.stream).lineno
                body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
                return jinja2.nodes.CallBlock(self.call_method("_body"), [], [], body).set_lineno(lineno)

            def _body(self, caller):
                return caller()

        def raise_exception(message):
            raise jinja2.exceptions.TemplateError(message)

        def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
            return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

        def strftime_now(fmt):
            import datetime
            self.used_clock = True
            return datetime.datetime.now().strftime(fmt)

        env = jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                                           extensions=[Generation, jinja2.ext.loopcontrols])
        env.filters["tojson"] = tojson
        env.globals["raise_exception"] = raise_exception
        env.globals["strftime_now"] = strftime_now
        try:
            self.template = env.from_string(text)
        except jinja2.TemplateSyntaxError as e:
            raise ConvertError("%s: the chat template is not valid Jinja (line %s: %s)" % (where, e.lineno, e.message))
        self.special_tokens = dict(special_tokens)

    def render(self, messages, add_generation_prompt):
        """The rendered text, or raises _RenderError naming jinja2's complaint."""
        try:
            return self.template.render(messages=[dict(m) for m in messages],
                                        add_generation_prompt=add_generation_prompt, tools=None, documents=None,
                                        **self.special_tokens)
        except self.errors as e:
            raise _RenderError("%s: %s" % (type(e).__name__, e))


class _RenderError(Exception):
    pass


# how templates of reasoning models rewrite an assistant message that holds <think>...</think>
DROP_REASONING = (lambda c: c.split("</think>")[-1], lambda c: c.split("</think>")[-1].lstrip("\n"),
                  lambda c: c.split("</think>")[-1].strip())


def chat_format(chat, messages, add_generation_prompt):
    """dintattn_chat_format in Python: the conversation's beginning, the default system message if
    the conversation has no system message first, prefix + content + suffix per message, then the
    prompt."""
    out = [chat.get("begin", "")]
    if "default_system" in chat and (not messages or messages[0]["role"] != "system"):
        messages = [{"role": "system", "content": chat["default_system"]}] + list(messages)
    for k, m in enumerate(messages):
        pre, suf = chat["roles"][m["role"]]
        last = chat.get("last", {}).get(m["role"])
        if k == len(messages) - 1 and last and not (len(last) > 2 and last[2] in m["content"]):
            pre, suf = last[0], last[1]
        out += [pre, m["content"], suf]
    if add_generation_prompt or chat.get("prompt_always"):
        out.append(chat.get("generation_prompt", ""))
    return "".join(out)


def _conv_name(messages, gen):
    return "[%s]%s" % (", ".join(m["role"] for m in messages), " + generation prompt" if gen else "")


def _first_difference(a, b, width=24):
    """(a's, b's) text around their first difference, for messages."""
    k = 0
    while k < min(len(a), len(b)) and a[k] == b[k]:
        k += 1
    lo = max(0, k - width)
    return a[lo:k + width], b[lo:k + width]


def _probe(roles, padded=False, tag="m"):
    """A conversation of `roles` whose contents are markers found nowhere else; `padded` puts
    whitespace around them (to see whether the template trims contents)."""
    out = []
    for i, r in enumerate(roles):
        c = "%s%d%sZq" % (tag.upper() + "rk", i, r[:2])
        out.append({"role": r, "content": (" \n " + c + "\n\n ") if padded else c})
    return out


def _cut(text, messages, conv):
    """text cut at each message's content: [before the first, between..., after the last]."""
    segs, at = [], 0
    for m in messages:
        c = m["content"]
        n = text.count(c)
        if n != 1:
            raise ConvertError("the template's text is not each message's content in order: for %s the %s "
                               "message's content appears %d times in jinja2's rendering%s"
                               % (conv, m["role"], n, " (dropped or rewritten)" if n == 0 else ""))
        k = text.find(c)
        if k < at:
            raise ConvertError("the template's text is not each message's content in order: for %s the "
                               "messages come out reordered" % conv)
        segs.append(text[at:k])
        at = k + len(c)
    segs.append(text[at:])
    return segs


def reduce_chat_template(tmpl, bos_text=None, special_texts=(), note=None):
    """The "chat" metadata of a ChatTemplate, or ConvertError saying why the template's text is not
    prefix + content + suffix per message plus a generation prompt.  bos_text: the BOS token's
    text when the engine adds BOS itself (the file has a bos_id): a rendering that begins with it
    has it cut off (it would otherwise be there twice).  special_texts: the tokenizer's special
    tokens, for the stop strings.  note(msg) is told what was adapted.

    A template that writes the generation prompt whatever add_generation_prompt says (the first
    Llama-3 Instruct template) reduces with "prompt_always": the prompt is the ending common to
    every rendering that, cut off, leaves a template that reduces."""
    probe = _probe(["user", "assistant", "user"], tag="g")
    try:
        ends = [tmpl.render(probe[:n], gen) for n in (1, 2, 3) for gen in (False, True)]
    except _RenderError:
        ends = None
    if ends and ends[4] == ends[5]:   # add_generation_prompt changes nothing: maybe always written
        # of the common endings that reduce, the one that needs the fewest special cases
        common = os.path.commonprefix([e[::-1] for e in ends])[::-1]
        best = None
        for k in range(1, len(common) + 1):
            tail = common[len(common) - k:]
            try:
                chat = _reduce_chat_template(tmpl, bos_text, special_texts, None, strip_tail=tail)
            except ConvertError:
                continue
            cost = ("system" not in chat["roles"]) + sum(key in chat for key in ("last", "begin", "default_system"))
            if best is None or cost < best[0]:
                best = (cost, tail)
            if cost == 0:
                break
        if best is not None:
            tail = best[1]
            chat = _reduce_chat_template(tmpl, bos_text, special_texts, note, strip_tail=tail)
            chat["generation_prompt"] = tail
            chat["prompt_always"] = True
            (note or (lambda msg: None))("the chat template writes the generation prompt %r whether or not it "
                                         "is asked for; stored as prompt_always" % tail)
            return chat
    return _reduce_chat_template(tmpl, bos_text, special_texts, note)


def _reduce_chat_template(tmpl, bos_text=None, special_texts=(), note=None, strip_tail=None):
    note = note or (lambda msg: None)

    def render(msgs, gen):
        text = tmpl.render(msgs, gen)
        if strip_tail is not None:
            if not text.endswith(strip_tail):
                raise ConvertError("the rendering of %s does not end with %r" % (_conv_name(msgs, gen), strip_tail))
            text = text[:len(text) - len(strip_tail)]
        return text

    bos_cut = [False]

    def body(text, conv):
        # the engine starts every sequence with BOS (examples/generate: BOS, then the encoded
        # text), so a template that writes bos_token first is stored without it
        if bos_text and text.startswith(bos_text):
            bos_cut[0] = True
            return text[len(bos_text):]
        if bos_cut[0]:
            raise ConvertError("the template's text depends on the position in the conversation: it begins "
                               "%s with its bos_token %r but %s without it" % ("other conversations", bos_text, conv))
        return text

    # user / assistant from [user, assistant, user]: P_u U X_u P_a A X_a P_u U X_u
    ua = _probe(["user", "assistant", "user"])
    conv = _conv_name(ua, False)
    try:
        text = render(ua, False)
    except _RenderError as e:
        raise ConvertError("jinja2 cannot render the conversation %s: %s" % (conv, e))
    s = _cut(body(text, conv), ua, conv)
    p_u, x_u = s[0], s[3]
    if not s[1].startswith(x_u):
        a, b = _first_difference(s[1], x_u)
        raise ConvertError("the template's text depends on the position in the conversation: a user message "
                           "followed by an assistant's ends %r, the last one ends %r" % (a, b))
    p_a = s[1][len(x_u):]
    lead = ""   # what the first message has before it that later ones do not
    if not s[2].endswith(p_u):
        # the text before the first user message is more than a user's prefix: a beginning the
        # template writes once ([gMASK]sop, a BOS text) or a default system message (Qwen2.5).
        # The assistant's suffix from [user, assistant] splits [user, assistant, user]'s text
        # between the two into the assistant's suffix and the user's prefix.
        ua2 = ua[:2]
        try:
            s2 = _cut(body(render(ua2, False), _conv_name(ua2, False)), ua2, _conv_name(ua2, False))
        except _RenderError as e:
            raise ConvertError("jinja2 cannot render the conversation %s: %s" % (_conv_name(ua2, False), e))
        x_a = s2[2]
        later = s[2][len(x_a):] if s[2].startswith(x_a) else None
        if later is None or not later or not p_u.endswith(later):
            raise ConvertError("the template's text depends on the position in the conversation: the first user "
                               "message begins %r, a later one %r (the template treats the first message "
                               "specially in a way that is neither a fixed beginning nor a default system "
                               "message)" % (p_u, s[2]))
        lead, p_u = p_u[:len(p_u) - len(later)], later
    else:
        x_a = s[2][:len(s[2]) - len(p_u)]
    roles = {"user": [p_u, x_u], "assistant": [p_a, x_a]}

    # the generation prompt: add_generation_prompt=True minus False
    try:
        with_prompt = body(render(ua, True), conv)
    except _RenderError as e:
        raise ConvertError("jinja2 cannot render the conversation %s with add_generation_prompt: %s" % (conv, e))
    without = "".join(s[0:1] + [m["content"] + x for m, x in zip(ua, s[1:])])
    if not with_prompt.startswith(without):
        raise ConvertError("with add_generation_prompt the template changes the conversation's text instead "
                           "of appending a prompt (%r vs %r)" % _first_difference(with_prompt, without))
    prompt = with_prompt[len(without):]

    def compare(chat, msgs, gen, transform=None, keep_last=False):
        conv = _conv_name(msgs, gen)
        try:
            want = body(render(msgs, gen), conv)
        except _RenderError as e:
            if [m["role"] for m in msgs] == ["system"]:
                return None   # a template may refuse a conversation of a system message alone
            raise ConvertError("jinja2 cannot render the conversation %s: %s" % (conv, e))
        ours = [dict(m, content=transform(m["content"])) if not (keep_last and k == len(msgs) - 1) else m
                for k, m in enumerate(msgs)] if transform else msgs
        got = chat_format(chat, ours, gen)
        return None if got == want else (conv, want, got)

    def verify(chat, shapes):
        """Held-out conversations of the given role sequences, with and without the generation
        prompt, must come out as jinja2 renders them; returns whether that needed the contents
        stripped of surrounding whitespace (templates that trim them)."""
        for turns in shapes:
            for gen in (False, True):
                bad = compare(chat, _probe(turns, tag="v%d" % len(turns)), gen)
                if bad:
                    conv, want, got = bad
                    a, b = _first_difference(want, got)
                    raise ConvertError("the template's text depends on the position in the conversation: for %s "
                                       "jinja2 renders ...%r... where prefix + content + suffix per message gives "
                                       "...%r..." % (conv, a, b))
        # contents with whitespace around them: some templates trim them ({{ content | trim }})
        trimmed = False
        for turns in shapes:
            for gen in (False, True):
                msgs = _probe(turns, padded=True, tag="w%d" % len(turns))
                bad = compare(chat, msgs, gen)
                if bad and not compare(chat, msgs, gen, transform=lambda c: c.strip()):
                    trimmed = True
                elif bad:
                    conv, want, got = bad
                    a, b = _first_difference(want, got)
                    raise ConvertError("the template changes message contents: for %s with whitespace around the "
                                       "contents jinja2 renders ...%r... where the contents as given give ...%r..."
                                       % (conv, a, b))
        # contents with inner newlines, quotes, backslashes, non-ASCII and template syntax must
        # pass through unchanged (no escaping, replacing or re-rendering)
        for turns in shapes:
            for gen in (False, True):
                msgs = _probe(turns, tag="i%d" % len(turns))
                for m in msgs:
                    m["content"] = "a\nb \"q\" \\ \u00e9\u6771 {{ x }} " + m["content"]
                bad = compare(chat, msgs, gen)
                if bad:
                    conv, want, got = bad
                    a, b = _first_difference(want, got)
                    raise ConvertError("the template changes message contents: for %s jinja2 renders ...%r... where "
                                       "the contents as given give ...%r..." % (conv, a, b))
        # assistant contents holding a reasoning block: templates of reasoning models drop it
        # from the history; dintattn_chat_format keeps it, so the caller must (and is told so)
        for turns in shapes:
            if "assistant" not in turns:
                continue
            for gen in (False, True):
                msgs = _probe(turns, tag="r%d" % len(turns))
                for m in msgs:
                    if m["role"] == "assistant":
                        m["content"] = "<think>\nRsn" + m["content"] + "\n</think>\n\n" + m["content"]
                bad = compare(chat, msgs, gen)
                if not bad:
                    continue
                if any(not compare(chat, msgs, gen, transform=f) for f in DROP_REASONING):
                    dropped_reasoning[0] = True
                    continue
                if msgs[-1]["role"] == "assistant" and any(not compare(chat, msgs, gen, transform=f, keep_last=True)
                                                           for f in DROP_REASONING):
                    dropped_reasoning[0] = True   # from the history; a last assistant message keeps it
                    continue
                conv, want, got = bad
                a, b = _first_difference(want, got)
                raise ConvertError("the template changes assistant contents that hold a reasoning block "
                                   "(<think>...</think>) depending on their position: for %s jinja2 renders "
                                   "...%r... where the contents as given give ...%r..." % (conv, a, b))
        return trimmed

    dropped_reasoning = [False]

    # check user/assistant conversations of 1 to 6 messages, ending with either role (after the
    # system role is known when the template writes a default system message)
    turns = [[("user", "assistant")[k % 2] for k in range(n)] for n in range(1, 7)]
    chat = {"roles": roles, "generation_prompt": prompt}
    if lead:
        chat["begin"] = lead
    # the last message, when it is an assistant's, may be written differently (Qwen3 gives the
    # assistant message after the last user message an empty reasoning block): from [user, assistant]
    ua2 = ua[:2]
    try:
        s2 = _cut(body(render(ua2, False), _conv_name(ua2, False)), ua2, _conv_name(ua2, False))
    except _RenderError as e:
        raise ConvertError("jinja2 cannot render the conversation %s: %s" % (_conv_name(ua2, False), e))
    if s2[1].startswith(x_u) and [s2[1][len(x_u):], s2[2]] != [p_a, x_a]:
        chat["last"] = {"assistant": [s2[1][len(x_u):], s2[2]]}
    trimmed = False
    first_why = None
    try:
        try:
            trimmed = verify(chat, turns)
        except ConvertError:
            # a last assistant message that holds its own reasoning block keeps it as it is
            # (Qwen3): then the last-message form applies only without "</think>" in the content
            if "last" not in chat:
                raise
            chat["last"]["assistant"] = chat["last"]["assistant"][:2] + ["</think>"]
            trimmed = verify(chat, turns)
        if "last" in chat:
            note("the chat template writes the last message, an assistant's, as %r ... %r%s; stored (last)"
                 % (chat["last"]["assistant"][0], chat["last"]["assistant"][1],
                    " unless it holds its own reasoning block" if len(chat["last"]["assistant"]) > 2 else ""))
    except ConvertError as e:
        if not lead:
            raise
        first_why = e   # the lead may be a default system message: decided below

    # system, if the template has one that reduces: [system, user, assistant, user], then checked
    # on system + 0 to 6 messages; otherwise no system role is stored and C refuses system messages
    sua = _probe(["system", "user", "assistant", "user"], tag="s")
    conv = _conv_name(sua, False)
    system_why = None
    try:
        s = _cut(body(render(sua, False), conv), sua, conv)
        if not s[1].endswith(p_u):
            raise ConvertError("after a system message the user message begins %r, without one %r (e.g. the "
                               "system message is folded into the first user turn)" % (s[1], p_u))
        sys_pre, sys_suf = s[0], s[1][:len(s[1]) - len(p_u)]
        with_system = {"roles": dict([("system", [sys_pre, sys_suf])] + list(roles.items())),
                       "generation_prompt": prompt}
        if "last" in chat:
            with_system["last"] = chat["last"]
        if lead and lead.startswith(sys_pre) and lead.endswith(sys_suf) and len(lead) >= len(sys_pre) + len(sys_suf):
            # a default system message: the lead is the system role's prefix + D + suffix
            with_system["default_system"] = lead[len(sys_pre):len(lead) - len(sys_suf)]
            trimmed = verify(with_system, turns) or trimmed
            note("the chat template writes a default system message when a conversation has none; it is stored "
                 "(default_system)")
        elif lead:
            if not sys_pre.startswith(lead):
                raise ConvertError("the conversation's beginning %r is not written before a system message"
                                   % lead)
            with_system["roles"]["system"][0] = sys_pre[len(lead):]
            with_system["begin"] = lead
        trimmed = verify(with_system, [["system"] + t for t in [[]] + turns]) or trimmed
        chat = with_system
    except _RenderError as e:
        if first_why is not None:
            raise first_why
        system_why = "jinja2 refuses a system message (%s)" % e
    except ConvertError as e:
        if first_why is not None:
            raise first_why
        system_why = str(e)
    if system_why:
        note("no system role is stored (dintattn_chat_format refuses system messages): %s" % system_why)
    if trimmed:
        note("the chat template strips whitespace around message contents; dintattn_chat_format keeps contents "
             "as given, so callers should strip them")
    if dropped_reasoning[0]:
        note("the chat template drops the reasoning (the text up to </think>) from assistant messages; "
             "dintattn_chat_format keeps contents as given, so callers should drop it")
    if bos_cut[0]:
        note("the chat template begins with the BOS token %r, which the engine adds itself; it is not stored"
             % bos_text)
    if tmpl.used_clock:
        note("the chat template writes the current date (strftime_now); the stored text holds today's")
    stop = x_a.strip()
    if stop and stop in special_texts:
        chat["stop"] = [stop]
    return chat


def special_token_texts(srcdir):
    """The template variables bos_token, eos_token, ... (and additional_special_tokens) of HF
    directory srcdir: tokenizer_config.json's, else special_tokens_map.json's, as transformers
    reads them."""
    specials = {}
    for name in ("special_tokens_map.json", "tokenizer_config.json"):   # the latter wins
        path = os.path.join(srcdir, name)
        if not os.path.exists(path):
            continue
        tc = _read_json(path)
        for key in SPECIAL_TOKEN_KEYS:
            t = _token_text(tc.get(key))
            if t is not None:
                specials[key] = t
        extra = [_token_text(v) for v in tc.get("additional_special_tokens") or []]
        if extra:
            specials["additional_special_tokens"] = [t for t in extra if t is not None]
    return specials


def chat_metadata(srcdir, tok_meta, note=None):
    """The "chat" metadata for HF directory srcdir (None when it has no template).  tok_meta: the
    tokenizer metadata the file will carry (its special tokens and bos_id)."""
    text, where = find_chat_template(srcdir)
    if text is None:
        return None
    specials = special_token_texts(srcdir)
    ids = special_token_ids(tok_meta)
    bos_text = specials.get("bos_token")
    bos_id = tok_meta.get("bos_id", -1)
    # the BOS text is cut only when it is the token the engine adds (the file's bos_id)
    engine_bos = bos_text if bos_text is not None and bos_id >= 0 and ids.get(bos_text) == bos_id else None
    tmpl = ChatTemplate(text, specials, where)
    try:
        return reduce_chat_template(tmpl, engine_bos, set(ids), note)
    except ConvertError as e:
        raise ConvertError("%s: chat template not stored: %s (--no-chat-template converts without it)" % (where, e))


def _id_list(v):
    if isinstance(v, bool):
        return []
    if isinstance(v, int):
        return [v]
    if isinstance(v, list):
        return [x for x in v if isinstance(x, int) and not isinstance(x, bool)]
    return []


def eos_ids(srcdir, config, tok_meta):
    """Every end-of-sequence id: config.json's eos_token_id (int or list) first, then
    generation_config.json's, then the tokenizer's eos_token (tokenizer_config.json or
    special_tokens_map.json), in order, without repeats."""
    ids = _id_list(config.get("eos_token_id"))
    if srcdir:
        gpath = os.path.join(srcdir, "generation_config.json")
        if os.path.exists(gpath):
            ids += _id_list(_read_json(gpath).get("eos_token_id"))
        i = special_token_ids(tok_meta).get(special_token_texts(srcdir).get("eos_token"))
        if i is not None:
            ids.append(i)
    out = []
    for i in ids:
        if i not in out:
            out.append(i)
    return out


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------

def layout_module(name):
    if name not in FORMATS:
        raise ConvertError("unknown --format %r" % name)
    return importlib.import_module("layouts." + name)


def detect_format(source):
    """--format auto: the one layout whose mismatch(source) is None; else ConvertError naming, for
    each layout, the tensor (or config.json key) that rules it out."""
    found, why = [], []
    for name in FORMATS:
        try:
            mod = layout_module(name)
        except ImportError:
            continue
        try:
            reason = mod.mismatch(source)
        except Exception as e:   # a layout that cannot read this source does not match it
            reason = " ".join(("%s: %s" % (type(e).__name__, e)).split())
        if reason is None:
            found.append(name)
        else:
            why.append("%s: %s" % (name, reason))
    if len(found) == 1:
        return found[0]
    if found:
        raise ConvertError("%s: cannot tell the layout (matches %s); pass --format" % (source.path, ", ".join(found)))
    raise ConvertError("%s: cannot tell the layout, no layout matches (%s); pass --format"
                       % (source.path, "; ".join(why)))


def build_parser():
    ap = cli.parser(__doc__, ["/usr/bin/python3 tools/convert.py ~/models/Motif-2.6B motif.safetensors --dtype bf16",
                              "/usr/bin/python3 tools/convert.py diff.pt diff.safetensors --format unilm --unilm-heads 8",
                              "/usr/bin/python3 tools/convert.py tokenizer.json tok.safetensors --format tokenizer"])
    ap.add_argument("source", help="HF model directory, .safetensors, PyTorch state dict or llama2.c checkpoint")
    ap.add_argument("out", help="the dintattn model file to write")
    ap.add_argument("--format", default="auto", choices=FORMATS + ["auto", "tokenizer"],
                    help="the source's layout (default auto: told from its tensor names and config.json); "
                         "tokenizer: write only SOURCE's tokenizer (a tokenizer.json, a rank file or an HF "
                         "directory) as a tokenizer-only file")
    ap.add_argument("--dtype", default="f32", choices=sorted(OUT_DTYPES), help="precision to store (default f32)")
    ap.add_argument("--tokenizer", metavar="FILE", help="tiktoken rank file or HF tokenizer.json to embed")
    ap.add_argument("--no-tokenizer", action="store_true", help="embed no tokenizer")
    ap.add_argument("--no-chat-template", action="store_true",
                    help="store no chat template (by default the source directory's chat_template.jinja or "
                         "tokenizer_config.json chat_template is reduced to per-role prefix/suffix strings)")
    for name in FORMATS:
        try:
            mod = layout_module(name)
        except ImportError:
            continue
        if hasattr(mod, "add_arguments"):
            # one group per layout, filled by the layout itself (a group nested inside it would
            # not be listed by --help)
            title = (mod.__doc__ or "").strip().split("\n")[0]
            mod.add_arguments(ap.add_argument_group("%s layout" % name, title))
    return ap


def source_tokenizer(tok, srcdir, src_config, V=None):
    """Tokenizer file tok (tokenizer.json or rank file) -> (tensors, metadata) with the
    end-of-sequence ids of HF directory srcdir (or None) and config src_config; every id is
    checked against vocab_size V (None: no model, only the ids' own consistency)."""
    tensors, meta = load_tokenizer(tok, src_config)
    limit = V if V is not None else tokenizer_max_id(tensors, meta) + 1
    if V is not None:
        top = tokenizer_max_id(tensors, meta)
        if top >= V:
            raise ConvertError("%s: token id %d is outside the model's vocab_size %d" % (tok, top, V))
    ends = eos_ids(srcdir, src_config, meta)
    if ends:
        meta["eos_id"] = ends[0]
    if len(ends) > 1:   # only then: files of single-EOS checkpoints stay as they were
        meta["eos_ids"] = ends
    what = "vocab_size %d" % V if V is not None else "the tokenizer's ids (0 to %d)" % (limit - 1)
    for key in ("bos_id", "eos_id"):
        if not -1 <= meta[key] < limit:
            raise ConvertError("%s: %s %d is outside %s" % (tok, key, meta[key], what))
    for i in meta.get("eos_ids", []):
        if not 0 <= i < limit:
            raise ConvertError("%s: end-of-sequence id %d (config.json, generation_config.json or "
                               "tokenizer_config.json) is outside %s" % (tok, i, what))
    return tensors, meta


def _chat(args, tokenizer):
    if not os.path.isdir(args.source) or args.no_chat_template:
        return None
    if tokenizer is not None:
        return chat_metadata(args.source, tokenizer[1],
                             note=lambda msg: sys.stderr.write("convert: chat template: %s\n" % msg))
    if find_chat_template(args.source)[0] is not None:
        _warn("%s: the chat template is not stored: the file carries no tokenizer" % args.source)
    return None


def convert_tokenizer(args):
    """--format tokenizer: SOURCE (a tokenizer.json, a rank file, or an HF directory with
    tokenizer.json and its config files) -> a tokenizer-only file."""
    srcdir = args.source if os.path.isdir(args.source) else None
    tok = args.tokenizer
    config = {}
    if srcdir is not None:
        if tok is None:
            tok = os.path.join(srcdir, "tokenizer.json")
            if not os.path.exists(tok):
                raise ConvertError("%s: no tokenizer.json in the directory" % srcdir)
        if os.path.exists(os.path.join(srcdir, "config.json")):
            config = _read_json(os.path.join(srcdir, "config.json"))
    elif tok is None:
        tok = args.source
    elif tok != args.source:
        raise ConvertError("--tokenizer FILE with --format tokenizer needs SOURCE to be a directory")
    if args.no_tokenizer:
        raise ConvertError("--no-tokenizer contradicts --format tokenizer")
    tokenizer = source_tokenizer(tok, srcdir, config)
    meta = tokenizer[1]
    if srcdir is not None and meta["bos_id"] == -1 and config.get("bos_token_id") is None:
        # no config.json bos_token_id (a tokenizer-only directory): tokenizer_config.json's bos_token
        i = special_token_ids(meta).get(special_token_texts(srcdir).get("bos_token"))
        if i is not None:
            meta["bos_id"] = i
    write_spec(args.out, None, [], "f32", tokenizer, _chat(args, tokenizer))
    return "tokenizer", {}


def convert(args):
    if args.format == "tokenizer":
        return convert_tokenizer(args)
    source = open_source(args.source)
    fmt = args.format if args.format != "auto" else detect_format(source)
    mod = layout_module(fmt)
    config, tensors = mod.plan(source, args)
    tokenizer = None
    if not args.no_tokenizer:
        tok = args.tokenizer
        if tok is None and os.path.isdir(args.source) and os.path.exists(os.path.join(args.source, "tokenizer.json")):
            tok = os.path.join(args.source, "tokenizer.json")
        if tok is not None:
            srcdir = args.source if os.path.isdir(args.source) else None
            tokenizer = source_tokenizer(tok, srcdir, source.config, config["vocab_size"])
    write_spec(args.out, config, tensors, args.dtype, tokenizer, _chat(args, tokenizer))
    return fmt, config


def main(argv=None):
    ap = build_parser()
    args = ap.parse_args(argv)
    try:
        fmt, config = convert(args)
    except ConvertError as e:
        sys.stderr.write("convert: %s\n" % e)
        return 1
    except OSError as e:
        sys.stderr.write("convert: %s: %s\n" % (getattr(e, "filename", None) or args.out, e.strerror or e))
        return 1
    except MemoryError:
        sys.stderr.write("convert: out of memory\n")
        return 1
    if fmt == "tokenizer":
        sys.stderr.write("convert: %s -> %s (tokenizer only)\n" % (args.source, args.out))
    else:
        sys.stderr.write("convert: %s -> %s (%s layout, %s, attention %s)\n"
                         % (args.source, args.out, fmt, args.dtype, config.get("attention")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
