"""dintattn: Python bindings for dintattn.h (ctypes and numpy; nothing is compiled at import).

Build the library first (`make lib` writes build/libdintattn.so) or install it (`make install`).
The library is found through, in order: $DINTATTN_LIB, libdintattn.so next to this file, the
repository's build/ (this file in python/), the directory `make install` put it in, the linker's
search (ctypes.util.find_library) and pkg-config's libdir for dintattn.

    import dintattn
    model = dintattn.Model("models/dint-kjv.safetensors")
    sess = dintattn.Session(model, n_threads=2)
    for piece in sess.generate("In the beginning", max_tokens=40, temperature=0):
        print(piece, end="", flush=True)
    sess.reset()
    ids = model.tokenizer().encode("And God said")
    print(sess.logprobs(ids))                   # log p(ids[i + 1] | ids[:i + 1])

Logits come back as float32 numpy arrays; token ids go in as any integer sequence or array.
Every library error raises DintattnError with the library's message. Objects free their C side
when garbage-collected, or at once with close() / a with-block.
"""

import codecs
import ctypes
import ctypes.util
import os
import subprocess
import weakref

import numpy as np

__all__ = ["DintattnError", "Model", "Session", "Tokenizer", "Sampler", "AttentionCapture", "attention_stats", "logprob_of",
           "library_path"]

_INSTALLED_LIBDIR = None  # `make install` writes its LIBDIR here

# dintattn_result, in the header's order: DintattnError.code compares with these (dintattn.ERR_CONTEXT)
RESULTS = ("OK", "ERR_IO", "ERR_TRUNCATED", "ERR_HEADER", "ERR_DTYPE", "ERR_OFFSETS", "ERR_METADATA",
           "ERR_CONFIG", "ERR_MISSING_TENSOR", "ERR_UNKNOWN_TENSOR", "ERR_SHAPE", "ERR_NOMEM", "ERR_ARG",
           "ERR_CONTEXT", "ERR_THREAD", "ERR_TOKENIZER", "ERR_NONFINITE")
(OK, ERR_IO, ERR_TRUNCATED, ERR_HEADER, ERR_DTYPE, ERR_OFFSETS, ERR_METADATA, ERR_CONFIG, ERR_MISSING_TENSOR,
 ERR_UNKNOWN_TENSOR, ERR_SHAPE, ERR_NOMEM, ERR_ARG, ERR_CONTEXT, ERR_THREAD, ERR_TOKENIZER, ERR_NONFINITE) = range(17)


def _find_library():
    env = os.environ.get("DINTATTN_LIB")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    places = [here, os.path.join(os.path.dirname(here), "build")] + ([_INSTALLED_LIBDIR] if _INSTALLED_LIBDIR else [])
    for d in places:
        if os.path.exists(os.path.join(d, "libdintattn.so")):
            return os.path.join(d, "libdintattn.so")
    found = ctypes.util.find_library("dintattn")
    if found:
        return found
    try:
        libdir = subprocess.run(["pkg-config", "--variable=libdir", "dintattn"], capture_output=True, text=True,
                                timeout=10).stdout.strip()
        if libdir and os.path.exists(os.path.join(libdir, "libdintattn.so")):
            return os.path.join(libdir, "libdintattn.so")
    except (OSError, subprocess.SubprocessError):
        pass
    raise ImportError("dintattn: libdintattn.so not found (run `make lib`, or set DINTATTN_LIB to its path)")


library_path = _find_library()
_lib = ctypes.CDLL(library_path)

# --- the header's structs and callbacks ----------------------------------------------------------

c_int, c_double, c_void_p, c_char_p, c_size_t = ctypes.c_int, ctypes.c_double, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t
_P = ctypes.POINTER
_int_p, _float_p = _P(c_int), _P(ctypes.c_float)


class _Error(ctypes.Structure):
    _fields_ = [("code", c_int), ("message", ctypes.c_char * 512)]


class _RopeScaling(ctypes.Structure):
    _fields_ = [("type", c_int), ("factor", c_double), ("low_freq_factor", c_double), ("high_freq_factor", c_double),
                ("original_max_position_embeddings", c_double), ("beta_fast", c_double), ("beta_slow", c_double),
                ("attention_factor", c_double), ("truncate", c_int)]


_SIZES = ("dim", "n_layers", "vocab_size", "hidden_dim", "max_seq_len", "n_heads", "head_dim", "v_head_dim",
          "n_k1_heads", "n_q2_heads", "n_k2_heads", "n_v_heads", "qk_rank")
# the config's enums as the file's config spells their values (docs/format.md section 2)
_ENUMS = {"attention": ("standard", "diff", "dint"), "integral": ("softmax", "mean"), "head_norm_type": ("rms", "group"),
          "head_scale": ("none", "one_minus_lambda_init"), "rope": ("interleaved", "halves", "none"),
          "ffn_act": ("silu", "polynorm"), "lambda_mode": ("reparam", "token_sigmoid")}
_BOOLS = ("head_norm", "tie_embeddings", "shared_k", "ffn_bias")
_ROPE_SCALING = ("none", "linear", "llama3", "yarn")
_QK_FORMS = ("auto", "factored", "merged")  # dintattn_qk_form
_ROPE_SCALING_FIELDS = ((), ("factor",), ("factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"),
                        ("factor", "original_max_position_embeddings", "beta_fast", "beta_slow", "attention_factor"))


class _Config(ctypes.Structure):
    _fields_ = ([(k, c_int) for k in _SIZES] +
                [("attention", c_int), ("integral", c_int), ("head_norm", c_int), ("head_norm_type", c_int),
                 ("head_scale", c_int), ("rope", c_int), ("rope_theta", c_double), ("norm_eps", c_double),
                 ("head_norm_eps", c_double), ("ffn_act", c_int), ("tie_embeddings", c_int), ("lambda_mode", c_int),
                 ("shared_k", c_int), ("rope_dim", c_int), ("rope_scaling", _RopeScaling), ("ffn_bias", c_int)])


_PROGRESS = ctypes.CFUNCTYPE(None, c_void_p, c_double, c_double)
_PROGRESS_LABEL = ctypes.create_string_buffer(b"dintattn")
_HOOK = ctypes.CFUNCTYPE(None, c_void_p, c_int, c_int, c_int, _float_p, c_int)


class _AttnRow(ctypes.Structure):  # dintattn_attn_row
    _fields_ = [("layer", c_int), ("head", c_int), ("pos", c_int), ("n_keys", c_int), ("lambda_", ctypes.c_float),
                ("A1", _float_p), ("A2", _float_p), ("integral", _float_p), ("W", _float_p)]


_ROW = ctypes.CFUNCTYPE(None, c_void_p, ctypes.POINTER(_AttnRow))


class _Inspect(ctypes.Structure):  # dintattn_inspect
    _fields_ = [("row", _ROW), ("user", c_void_p), ("layers", c_void_p), ("heads", c_void_p), ("pos_from", c_int),
                ("pos_to", c_int)]


class _AttnStats(ctypes.Structure):  # dintattn_attn_stats
    _fields_ = [(k, c_double) for k in ("sum", "neg_sum", "neg_share", "entropy", "span_mass", "rest_mass")]


class _LoadOptions(ctypes.Structure):
    _fields_ = [("qk_form", c_int), ("weights", c_int), ("check_finite", c_int), ("progress", _PROGRESS),
                ("progress_user", c_void_p), ("map", c_int), ("n_threads", c_int)]


class _SessionOptions(ctypes.Structure):
    _fields_ = [("n_ctx", c_int), ("n_batch", c_int), ("n_threads", c_int), ("kernels", c_int), ("precision", c_int),
                ("kv", c_int), ("tiles_min_tokens", c_int), ("bf16_dot", c_int)]


class _SamplerOptions(ctypes.Structure):
    _fields_ = [("temperature", ctypes.c_float), ("top_k", c_int), ("top_p", ctypes.c_float), ("min_p", ctypes.c_float),
                ("repeat_penalty", ctypes.c_float), ("repeat_last_n", c_int), ("seed", ctypes.c_ulonglong)]


class _TensorInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * 64), ("layer", c_int), ("rows", ctypes.c_longlong), ("cols", ctypes.c_longlong),
                ("type", c_char_p), ("bytes", c_size_t), ("read_bytes", c_size_t), ("matrix", c_int), ("in_file", c_int),
                ("heads", c_int)]


class _ChatMessage(ctypes.Structure):
    _fields_ = [("role", c_char_p), ("content", c_char_p)]


class _BatchItem(ctypes.Structure):  # dintattn_batch_item
    _fields_ = [("sess", c_void_p), ("tokens", _int_p), ("n_tokens", c_int), ("logits", _float_p), ("all_logits", c_int)]


class _BatchOptions(ctypes.Structure):  # dintattn_batch_options
    _fields_ = [("max_tokens", c_int)]


class _ActOptions(ctypes.Structure):  # dintattn_act_options
    _fields_ = [("top_k", c_int)]


class _ActStats(ctypes.Structure):  # dintattn_act_stats
    _fields_ = [("count", ctypes.c_longlong), ("nonfinite", ctypes.c_longlong), ("k", c_int)] + \
        [(k, c_double) for k in ("top1", "topk", "median", "ratio", "mean", "std", "kurtosis")]


ACT_KINDS = ("logits1", "logits2", "ffn_in", "hidden")  # dintattn_act_kind, in value order


class _AbiField(ctypes.Structure):  # dintattn_abi_field: a row of the library's layout table
    _fields_ = [("type", c_char_p), ("field", c_char_p), ("offset", c_size_t), ("size", c_size_t)]


# the header's struct each ctypes class mirrors (a trailing "_" is a Python keyword's escape: lambda_)
_MIRRORS = {"dintattn_error": _Error, "dintattn_rope_scaling": _RopeScaling, "dintattn_config": _Config,
            "dintattn_attn_row": _AttnRow, "dintattn_inspect": _Inspect, "dintattn_attn_stats": _AttnStats,
            "dintattn_load_options": _LoadOptions, "dintattn_session_options": _SessionOptions,
            "dintattn_sampler_options": _SamplerOptions, "dintattn_tensor_info": _TensorInfo,
            "dintattn_chat_message": _ChatMessage, "dintattn_batch_item": _BatchItem,
            "dintattn_batch_options": _BatchOptions, "dintattn_act_options": _ActOptions,
            "dintattn_act_stats": _ActStats}
# the header's enums whose values these bindings count on: (enum, constants' prefix, names in value order)
_ENUM_MIRRORS = [("dintattn_result", "DINTATTN_", RESULTS), ("dintattn_attention", "DINTATTN_ATTN_", _ENUMS["attention"]),
                 ("dintattn_integral", "DINTATTN_INTEGRAL_", _ENUMS["integral"]),
                 ("dintattn_head_norm_type", "DINTATTN_HEADNORM_", _ENUMS["head_norm_type"]),
                 ("dintattn_head_scale", "DINTATTN_HEAD_SCALE_", _ENUMS["head_scale"]),
                 ("dintattn_rope", "DINTATTN_ROPE_", _ENUMS["rope"]), ("dintattn_ffn_act", "DINTATTN_FFN_", _ENUMS["ffn_act"]),
                 ("dintattn_lambda_mode", "DINTATTN_LAMBDA_", _ENUMS["lambda_mode"]),
                 ("dintattn_rope_scaling_type", "DINTATTN_ROPE_SCALING_", _ROPE_SCALING),
                 ("dintattn_qk_form", "DINTATTN_QK_", _QK_FORMS), ("dintattn_act_kind", "DINTATTN_ACT_", ACT_KINDS)]


# --- every API function, with its C signature ------------------------------------------------------

_err_p, _pp = _P(_Error), _P(c_void_p)
_SIGNATURES = {
    "progress_stderr": (None, [c_void_p, c_double, c_double]),
    "model_load": (c_int, [c_char_p, _P(_LoadOptions), _pp, _err_p]),
    "model_load_memory": (c_int, [c_void_p, c_size_t, _P(_LoadOptions), _pp, _err_p]),
    "model_free": (None, [c_void_p]),
    "model_config": (_P(_Config), [c_void_p]),
    "model_qk_factored": (c_int, [c_void_p]),
    "model_weight_bytes": (c_size_t, [c_void_p]),
    "model_owned_bytes": (c_size_t, [c_void_p]),
    "model_params": (ctypes.c_longlong, [c_void_p]),
    "model_kv_bytes": (c_double, [c_void_p, c_int]),
    "model_tensors": (ctypes.c_longlong, [c_void_p, _P(_TensorInfo), ctypes.c_longlong]),
    "weights_name": (c_char_p, [c_int]),
    "weights_parse": (c_int, [c_char_p, _int_p, _err_p]),
    "kernels_name": (c_char_p, [c_int]),
    "kernels_parse": (c_int, [c_char_p, _int_p, _err_p]),
    "precision_name": (c_char_p, [c_int]),
    "precision_parse": (c_int, [c_char_p, _int_p, _err_p]),
    "session_precision": (c_int, [c_void_p]),
    "kv_name": (c_char_p, [c_int]),
    "kv_parse": (c_int, [c_char_p, _int_p, _err_p]),
    "map_name": (c_char_p, [c_int]),
    "map_parse": (c_int, [c_char_p, _int_p, _err_p]),
    "session_kv": (c_int, [c_void_p]),
    "session_prefill_unit": (c_int, [c_void_p, c_char_p, _int_p, _err_p]),
    "prefill_unit_name": (c_char_p, [c_int]),
    "session_kv_bytes": (c_double, [c_void_p, c_int]),
    "session_new": (c_int, [c_void_p, _P(_SessionOptions), _pp, _err_p]),
    "session_free": (None, [c_void_p]),
    "session_reset": (None, [c_void_p]),
    "session_copy": (c_int, [c_void_p, c_void_p, _err_p]),
    "session_pos": (c_int, [c_void_p]),
    "session_n_ctx": (c_int, [c_void_p]),
    "session_bytes": (c_size_t, [c_void_p]),
    "session_kernels": (c_int, [c_void_p]),
    "session_set_attn_hook": (None, [c_void_p, _HOOK, c_void_p]),
    "session_inspect": (c_int, [c_void_p, _P(_Inspect), _err_p]),
    "attn_stats_of": (None, [_float_p, c_int, _P(c_int), c_int, _P(_AttnStats)]),
    "prefill": (c_int, [c_void_p, _int_p, c_int, _float_p, c_int, _err_p]),
    "decode": (c_int, [c_void_p, c_int, _float_p, _err_p]),
    "logprobs": (c_int, [c_void_p, _int_p, c_int, _float_p, _err_p]),
    "batch_step": (c_int, [_P(_BatchItem), c_int, _P(_BatchOptions), _err_p]),
    "session_act_start": (c_int, [c_void_p, _P(_ActOptions), _err_p]),
    "session_act_stop": (None, [c_void_p]),
    "session_act_stats": (c_int, [c_void_p, c_int, c_int, _P(_ActStats), _float_p, c_int, _err_p]),
    "model_prepack": (c_int, [c_void_p, c_void_p, c_size_t, _P(c_size_t), _err_p]),
    "logprob_of": (c_double, [_float_p, c_int, c_int]),
    "sampler_new": (c_int, [c_int, _P(_SamplerOptions), _pp, _err_p]),
    "sampler_free": (None, [c_void_p]),
    "sampler_sample": (c_int, [c_void_p, _float_p]),
    "sampler_accept": (None, [c_void_p, c_int]),
    "sampler_reset": (None, [c_void_p]),
    "result_name": (c_char_p, [c_int]),
    "version": (c_char_p, []),
    "tokenizer_load": (c_int, [c_char_p, _pp, _err_p]),
    "tokenizer_from_memory": (c_int, [c_void_p, c_size_t, _pp, _err_p]),
    "tokenizer_from_model": (c_int, [c_void_p, _pp, _err_p]),
    "tokenizer_add_special": (c_int, [c_void_p, c_char_p, c_int, _err_p]),
    "tokenizer_set_pattern": (c_int, [c_void_p, c_char_p, _err_p]),
    "tokenizer_set_patterns": (c_int, [c_void_p, _P(c_char_p), c_int, _err_p]),
    "tokenizer_free": (None, [c_void_p]),
    "tokenizer_n_vocab": (c_int, [c_void_p]),
    "tokenizer_bos": (c_int, [c_void_p]),
    "tokenizer_eos": (c_int, [c_void_p]),
    "tokenizer_is_eos": (c_int, [c_void_p, c_int]),
    "tokenizer_source": (c_char_p, [c_void_p]),
    "tokenizer_encode": (c_int, [c_void_p, c_char_p, c_size_t, c_int, _int_p, c_int, _int_p, _err_p]),
    "tokenizer_token": (c_void_p, [c_void_p, c_int, _P(c_size_t)]),  # not NUL-terminated: read with its length
    "tokenizer_decode": (c_int, [c_void_p, _int_p, c_int, c_int, c_char_p, c_size_t, _P(c_size_t), _err_p]),
    "tokenizer_is_special": (c_int, [c_void_p, c_int]),
    "tokenizer_has_token": (c_int, [c_void_p, c_int]),
    "tokenizer_encode_prompt": (c_int, [c_void_p, c_char_p, c_size_t, c_int, _int_p, c_int, _int_p, _err_p]),
    "chat_format": (c_int, [c_void_p, _P(_ChatMessage), c_int, c_int, c_char_p, c_size_t, _P(c_size_t), _err_p]),
    "chat_has_template": (c_int, [c_void_p]),
    "chat_n_stops": (c_int, [c_void_p]),
    "chat_stop": (c_char_p, [c_void_p, c_int]),
    "abi_fields": (_P(_AbiField), [_int_p]),
}
for _name, (_res, _args) in _SIGNATURES.items():
    try:
        _f = getattr(_lib, "dintattn_" + _name)
    except AttributeError:
        raise ImportError("%s has no dintattn_%s: the library is older than these bindings (rebuild it: make lib)"
                          % (library_path, _name)) from None
    _f.restype, _f.argtypes = _res, _args


def _check_abi(mirrors=None, enums=None):
    """Checks the ctypes mirrors against the library's layout table (dintattn_abi_fields): each struct's
    sizeof and every field's offset and size, the enums' values. Raises ImportError naming the struct
    and field that differ: a mismatch would otherwise corrupt memory without a word."""
    mirrors, enums = mirrors or _MIRRORS, enums or _ENUM_MIRRORS
    n = c_int()
    rows = _lib.dintattn_abi_fields(ctypes.byref(n))
    table = {}
    for i in range(n.value):
        r = rows[i]
        table.setdefault(r.type.decode(), {})[None if r.field is None else r.field.decode()] = (r.offset, r.size)
    wrong = []
    for cname, cls in mirrors.items():
        c = table.get(cname)
        if c is None:
            wrong.append("%s: not in the library's table" % cname)
            continue
        if ctypes.sizeof(cls) != c[None][1]:
            wrong.append("%s: sizeof is %d in the library, %d in %s" % (cname, c[None][1], ctypes.sizeof(cls), cls.__name__))
        py = {f[0].rstrip("_"): (getattr(cls, f[0]).offset, getattr(cls, f[0]).size) for f in cls._fields_}
        for field, (off, size) in c.items():
            if field is None:
                continue
            if field not in py:
                wrong.append("%s.%s: missing from %s" % (cname, field, cls.__name__))
            elif py[field] != (off, size):
                wrong.append("%s.%s: offset %d size %d in the library, offset %d size %d in %s"
                             % (cname, field, off, size, py[field][0], py[field][1], cls.__name__))
        wrong += ["%s.%s: no such field in the library" % (cname, f) for f in py if f not in c]
    for cname, prefix, names in enums:
        c = {k: v[0] for k, v in table.get(cname, {}).items() if k is not None}
        py = {prefix + name.upper(): value for value, name in enumerate(names)}
        if c != py:
            wrong.append("enum %s: the library has %s, the bindings %s" % (cname, sorted(c.items(), key=lambda kv: kv[1]),
                                                                          sorted(py.items(), key=lambda kv: kv[1])))
    if wrong:
        raise ImportError("python/dintattn.py does not match the structs of %s (dintattn %s): %s -- use the bindings of "
                          "the same version as the library, or rebuild it (make lib)"
                          % (library_path, _lib.dintattn_version().decode(), "; ".join(wrong)))


_check_abi()

#: DINTATTN_VERSION of the loaded library (dintattn_version)
__version__ = _lib.dintattn_version().decode()


class DintattnError(Exception):
    """A call into dintattn failed: .code (dintattn.ERR_*), .result (its name, e.g. "ERR_CONTEXT"),
    .name (the library's English name of it) and .message (the library's one line)."""

    def __init__(self, code, message):
        self.code, self.message = code, message
        self.result = RESULTS[code] if 0 <= code < len(RESULTS) else str(code)
        self.name = (_lib.dintattn_result_name(code) or b"unknown error").decode()
        super().__init__("%s (%s)" % (message, self.name))


def _call(fn, *args):
    """fn(*args, &err); raises DintattnError if it does not return DINTATTN_OK."""
    err = _Error()
    rc = fn(*args, ctypes.byref(err))
    if rc != OK:
        raise DintattnError(rc, err.message.decode("utf-8", "replace"))


def _parse(kind, name):
    out = c_int()
    _call(getattr(_lib, "dintattn_%s_parse" % kind), str(name).encode(), ctypes.byref(out))
    return out.value


def _ids(tokens):
    """Token ids (a sequence or 1-D array of any integer type) as a contiguous int32 array."""
    a = np.asarray(tokens)
    if a.ndim > 1:
        raise ValueError("token ids must be one sequence, not an array of shape %s" % (a.shape,))
    if a.size and a.dtype.kind not in "iu":
        raise TypeError("token ids must be integers, not %s" % a.dtype)
    if a.size and (int(a.min()) < -2 ** 31 or int(a.max()) >= 2 ** 31):  # the library checks the vocabulary
        raise DintattnError(ERR_ARG, "token ids must fit in 32 bits: %d to %d given" % (a.min(), a.max()))
    return np.ascontiguousarray(a.reshape(-1), dtype=np.int32)


def _id(token):
    return int(_ids([int(token)])[0])


def _ptr(a, kind=_int_p):
    return a.ctypes.data_as(kind)


def logprob_of(logits, token):
    """log p(token) = logits[token] - logsumexp(logits), in double (NaN if token is out of range)."""
    a = np.ascontiguousarray(logits, dtype=np.float32).reshape(-1)
    if not -2 ** 31 <= int(token) < 2 ** 31:
        return float("nan")
    return _lib.dintattn_logprob_of(_ptr(a, _float_p), a.size, int(token))


class _Handle:
    """Owns one C object: freed by close(), a with-block's end or garbage collection."""
    _free = None

    def __init__(self):
        self._p = c_void_p()

    @property
    def _h(self):
        if not self._p:
            raise ValueError("%s is closed" % type(self).__name__)
        return self._p

    def close(self):
        if getattr(self, "_p", None):
            getattr(_lib, self._free)(self._p)
            self._p = c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if _lib is not None:  # None when the interpreter is shutting down
            self.close()


class Config(dict):
    """The model's config (the header's dintattn_config) as a dict whose keys are also attributes."""

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None


class Model(_Handle):
    """A loaded model file: Model(path, weights="file"|"f32"|"bf16"|"q8"|"q4", qk_form="auto"|"factored"|
    "merged", check_finite=False, progress=False|True|callable(done, total), map="auto"|"file"|"copy",
    n_threads=1 (threads converting weights to another precision). Read-only: share it."""
    _free = "dintattn_model_free"

    def __init__(self, path, weights="file", qk_form="auto", check_finite=False, progress=False, map="auto",
                 n_threads=1):
        super().__init__()
        self._children, self._tokenizer = weakref.WeakSet(), None  # sessions and tokenizers made from it
        self.path = os.fspath(path)
        if qk_form not in _QK_FORMS:
            raise DintattnError(ERR_ARG, "qk_form must be auto, factored or merged, not %r" % (qk_form,))
        opt = _LoadOptions(_QK_FORMS.index(qk_form), _parse("weights", weights), bool(check_finite))
        opt.map = _parse("map", map)
        opt.n_threads = n_threads
        if progress is True:  # the library's own: "dintattn: loading weights, N%" on stderr
            opt.progress = ctypes.cast(_lib.dintattn_progress_stderr, _PROGRESS)
            opt.progress_user = ctypes.addressof(_PROGRESS_LABEL)
        elif callable(progress):
            opt.progress = _PROGRESS(lambda user, done, total: progress(done, total))
        _call(_lib.dintattn_model_load, os.fsencode(self.path), ctypes.byref(opt), ctypes.byref(self._p))
        c = _lib.dintattn_model_config(self._p).contents
        cfg = Config({k: getattr(c, k) for k in _SIZES + ("rope_dim", "rope_theta", "norm_eps", "head_norm_eps")})
        cfg.update({k: bool(getattr(c, k)) for k in _BOOLS})
        cfg.update({k: names[getattr(c, k)] for k, names in _ENUMS.items()})
        rs = c.rope_scaling
        cfg["rope_scaling"] = None if rs.type == 0 else dict(
            {k: getattr(rs, k) for k in _ROPE_SCALING_FIELDS[rs.type]}, type=_ROPE_SCALING[rs.type])
        if rs.type == _ROPE_SCALING.index("yarn"):
            cfg["rope_scaling"]["truncate"] = bool(rs.truncate)
        self.config = cfg
        self.vocab_size = cfg.vocab_size

    def close(self):
        """Frees the model, and the tokenizer model.tokenizer() made; its other sessions and tokenizers
        must be closed first."""
        if any(child._p for child in self._children if child is not self._tokenizer):
            raise ValueError("close the model's sessions and tokenizers first")
        if self._tokenizer is not None:
            self._tokenizer.close()
        super().close()

    def __del__(self):
        # A session or tokenizer holds its model, so this runs after theirs; except when a
        # reference cycle through them is collected: then the model is left mapped, not freed first.
        if _lib is not None and not any(child._p for child in self._children if child is not self._tokenizer):
            self.close()

    def __repr__(self):
        return "<dintattn.Model %r: %s, %d layers, vocab %d>" % (self.path, self.config.attention, self.config.n_layers,
                                                               self.vocab_size)

    params = property(lambda self: _lib.dintattn_model_params(self._h), doc="parameters of the file's tensors")
    weight_bytes = property(lambda self: _lib.dintattn_model_weight_bytes(self._h), doc="weight bytes a token reads")
    owned_bytes = property(lambda self: _lib.dintattn_model_owned_bytes(self._h), doc="bytes of converted or copied weights")
    qk_factored = property(lambda self: bool(_lib.dintattn_model_qk_factored(self._h)))

    def kv_bytes(self, n_tokens):
        return _lib.dintattn_model_kv_bytes(self._h, int(n_tokens))

    def prepack(self, session, max_bytes=0):
        """Packs the weight panels once (dintattn_model_prepack) as session's kernels run them, so that
        steps of a few tokens (batches of decodes) read each matrix once; returns the bytes added
        (1.25 a weight). No session of the model may run meanwhile."""
        n = c_size_t()
        _call(_lib.dintattn_model_prepack, self._h, session._h, int(max_bytes), ctypes.byref(n))
        return n.value

    def tensors(self):
        """The tensors the model holds, a dict each: name, layer (-1: none), rows, cols, type (as held:
        "f32", "bf16", "q8", ...), bytes, read_bytes (per decoded token), matrix, in_file, heads (a
        matrix multiplied head by head in that many blocks of rows: Shared-DIFF's up factors)."""
        n = _lib.dintattn_model_tensors(self._h, None, 0)
        infos = (_TensorInfo * n)()
        _lib.dintattn_model_tensors(self._h, infos, n)
        out = []
        for t in infos:
            d = {k: getattr(t, k) for k, _ in _TensorInfo._fields_}
            d.update(name=t.name.decode(), type=t.type.decode(), matrix=bool(t.matrix), in_file=bool(t.in_file))
            out.append(d)
        return out

    def tokenizer(self):
        """The tokenizer the file carries: one per model, made on first use, closed with the model."""
        if self._tokenizer is None or not self._tokenizer._p:
            self._tokenizer = Tokenizer(model=self)
            self._tokenizer.model = weakref.proxy(self)  # no cycle: the model owns this one
        return self._tokenizer

    def chat_format(self, messages, add_generation_prompt=True):
        """The conversation [{"role": ..., "content": ...}, ...] as the model's chat template writes it."""
        msgs = (_ChatMessage * max(1, len(messages)))(*[(m["role"].encode(), m["content"].encode()) for m in messages])
        n = c_size_t()
        _call(_lib.dintattn_chat_format, self._h, msgs, len(messages), int(add_generation_prompt), None, 0, ctypes.byref(n))
        buf = ctypes.create_string_buffer(n.value + 1)
        _call(_lib.dintattn_chat_format, self._h, msgs, len(messages), int(add_generation_prompt), buf, n.value + 1,
              ctypes.byref(n))
        return buf.raw[:n.value].decode("utf-8", "replace")

    @property
    def chat_stops(self):
        """The chat template's stop strings ([] without a template)."""
        return [_lib.dintattn_chat_stop(self._h, k).decode("utf-8", "replace") for k in range(_lib.dintattn_chat_n_stops(self._h))]


class Tokenizer(_Handle):
    """Tokenizer(path): a tokenizer file, a model file's tokenizer or a tiktoken rank file;
    model.tokenizer() for the one a loaded model carries."""
    _free = "dintattn_tokenizer_free"

    def __init__(self, path=None, model=None):
        super().__init__()
        if (path is None) == (model is None):
            raise TypeError("Tokenizer(path) or Tokenizer(model=...)")
        if model is not None:
            self.model = model  # the tokenizer reads the model's memory: keep it alive
            _call(_lib.dintattn_tokenizer_from_model, model._h, ctypes.byref(self._p))
            model._children.add(self)
        else:
            _call(_lib.dintattn_tokenizer_load, os.fsencode(path), ctypes.byref(self._p))

    n_vocab = property(lambda self: _lib.dintattn_tokenizer_n_vocab(self._h))
    bos = property(lambda self: _none_if_negative(_lib.dintattn_tokenizer_bos(self._h)), doc="BOS id, or None")
    eos = property(lambda self: _none_if_negative(_lib.dintattn_tokenizer_eos(self._h)), doc="EOS id, or None")
    source = property(lambda self: _lib.dintattn_tokenizer_source(self._h).decode(),
                      doc='the kind of file read: "model file", "tokenizer file" or "tiktoken rank file"')

    def is_eos(self, token):
        """True for the EOS id and any other id the model file lists as ending a generation."""
        return bool(_lib.dintattn_tokenizer_is_eos(self._h, _id(token)))

    def is_special(self, token):
        return bool(_lib.dintattn_tokenizer_is_special(self._h, _id(token)))

    def has_token(self, token):
        """False for ids past the tokenizer (a model's vocabulary padded past it): they have no text."""
        return bool(_lib.dintattn_tokenizer_has_token(self._h, _id(token)))

    def encode(self, text, allow_special=True):
        """Token ids of text (str, or bytes: any bytes, invalid UTF-8 included), without a BOS."""
        return self._encode(_lib.dintattn_tokenizer_encode, text, allow_special)

    def encode_prompt(self, text, allow_special=True):
        """A prompt's ids: as encode, with the tokenizer's BOS first (if it has one) unless the text's
        own ids begin with it (the library's dintattn_tokenizer_encode_prompt)."""
        return self._encode(_lib.dintattn_tokenizer_encode_prompt, text, allow_special)

    def _encode(self, fn, text, allow_special):
        data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        cap, n = len(data) + 16, c_int()
        while True:
            ids = np.empty(cap, dtype=np.int32)
            _call(fn, self._h, data, len(data), int(allow_special), _ptr(ids), cap, ctypes.byref(n))
            if n.value <= cap:
                return ids[:n.value].tolist()
            cap = n.value  # a normalizer that adds text can make more ids than bytes

    def decode_bytes(self, ids, skip_special=False):
        """The bytes ids decode to (the library's dintattn_tokenizer_decode)."""
        a, n = _ids(ids), c_size_t()
        _call(_lib.dintattn_tokenizer_decode, self._h, _ptr(a), a.size, int(skip_special), None, 0, ctypes.byref(n))
        buf = ctypes.create_string_buffer(n.value + 1)
        _call(_lib.dintattn_tokenizer_decode, self._h, _ptr(a), a.size, int(skip_special), buf, n.value + 1, ctypes.byref(n))
        return buf.raw[:n.value]

    def decode(self, ids, skip_special=False, errors="replace"):
        """The text of ids; bytes that are not UTF-8 become U+FFFD (errors="replace")."""
        return self.decode_bytes(ids, skip_special).decode("utf-8", errors)

    def token_bytes(self, token):
        """The bytes token `token` contributes to a stream of text."""
        n = c_size_t()
        p = _lib.dintattn_tokenizer_token(self._h, _id(token), ctypes.byref(n))
        if p is None:
            raise DintattnError(ERR_ARG, "token %d is not in the tokenizer's vocabulary" % token)
        return ctypes.string_at(p, n.value)

    def add_special(self, text, token):
        _call(_lib.dintattn_tokenizer_add_special, self._h, text.encode(), _id(token))

    def set_pattern(self, *names_or_regexes):
        """The split pattern: a family's name ("cl100k", "gpt2", "o200k", ...) or regexes applied in turn."""
        if len(names_or_regexes) == 1:
            _call(_lib.dintattn_tokenizer_set_pattern, self._h, names_or_regexes[0].encode())
        else:
            arr = (c_char_p * len(names_or_regexes))(*[r.encode() for r in names_or_regexes])
            _call(_lib.dintattn_tokenizer_set_patterns, self._h, arr, len(names_or_regexes))


def _none_if_negative(v):
    return None if v < 0 else v


class Sampler(_Handle):
    """Draws the next token from logits: Sampler(vocab, temperature=0 (greedy), top_k=0, top_p=0, min_p=0,
    repeat_penalty=0, repeat_last_n=0 (64), seed=0). vocab is a size or a Model. The C defaults (0 = off)."""
    _free = "dintattn_sampler_free"

    def __init__(self, vocab, temperature=0.0, top_k=0, top_p=0.0, min_p=0.0, repeat_penalty=0.0, repeat_last_n=0, seed=0):
        super().__init__()
        self.vocab = vocab.vocab_size if isinstance(vocab, Model) else int(vocab)
        opt = _SamplerOptions(temperature, top_k, top_p, min_p, repeat_penalty, repeat_last_n, seed)
        _call(_lib.dintattn_sampler_new, self.vocab, ctypes.byref(opt), ctypes.byref(self._p))

    def sample(self, logits):
        """A token id drawn from logits [vocab] (not changed: the library works on a copy)."""
        a = np.array(logits, dtype=np.float32, copy=True).reshape(-1)
        if a.size != self.vocab:
            raise ValueError("%d logits for a vocabulary of %d" % (a.size, self.vocab))
        return _lib.dintattn_sampler_sample(self._h, _ptr(a, _float_p))

    def accept(self, token):
        """Records a token (prompt or generated) for the repetition penalty."""
        _lib.dintattn_sampler_accept(self._h, _id(token))

    def reset(self):
        _lib.dintattn_sampler_reset(self._h)


class Session(_Handle):
    """A model's running state (KV cache, DINT's S, scratch), sized once for n_ctx tokens (0: the
    model's max_seq_len). n_threads runs decode's rows and heads; precision "auto"|"exact"|"fast";
    kernels "auto"|"portable"|"avx2"|"avx512"|"amx"; kv, the cache's type, "f32"|"bf16"|"q8". One
    thread at a time."""
    _free = "dintattn_session_free"

    def __init__(self, model, n_ctx=0, n_threads=1, n_batch=0, precision="auto", kernels="auto", kv="f32"):
        super().__init__()
        self.model, self._capture = model, None
        self.stop_reason = None  # why the last generate_ids / generate stopped
        opt = _SessionOptions(n_ctx, n_batch, n_threads, _parse("kernels", kernels), _parse("precision", precision),
                              _parse("kv", kv))
        _call(_lib.dintattn_session_new, model._h, ctypes.byref(opt), ctypes.byref(self._p))
        model._children.add(self)

    pos = property(lambda self: _lib.dintattn_session_pos(self._h), doc="tokens held: the next token's position")
    n_ctx = property(lambda self: _lib.dintattn_session_n_ctx(self._h), doc="tokens the session can hold")
    bytes = property(lambda self: _lib.dintattn_session_bytes(self._h), doc="memory allocated at creation")
    kernels = property(lambda self: _lib.dintattn_kernels_name(_lib.dintattn_session_kernels(self._h)).decode())
    precision = property(lambda self: _lib.dintattn_precision_name(_lib.dintattn_session_precision(self._h)).decode())
    kv = property(lambda self: _lib.dintattn_kv_name(_lib.dintattn_session_kv(self._h)).decode())

    def prefill_unit(self, weight_type):
        """What a prompt's products of weights held as weight_type ("f32", "f16", "bf16", "q8", "q4")
        run on in this session, for a chunk of its n_batch tokens: "sgemm", "rows", "f32 panels",
        "bf16 panels", "int8 panels", "amx bf16 tiles" or "amx bf16x3 tiles" (f32 activations in
        three exact bf16 parts)."""
        out = c_int()
        _call(_lib.dintattn_session_prefill_unit, self._h, str(weight_type).encode(), ctypes.byref(out))
        return _lib.dintattn_prefill_unit_name(out.value).decode()

    def kv_bytes(self, n_tokens):
        """Bytes n_tokens positions hold in this session's cache (and DINT's S)."""
        return _lib.dintattn_session_kv_bytes(self._h, int(n_tokens))

    def reset(self):
        """Forgets every token: the next one is at position 0."""
        _lib.dintattn_session_reset(self._h)

    def copy_from(self, other):
        """Makes this session hold other's tokens (same model and cache type; they must fit), so it
        continues exactly as other would: prefill a shared context once, then copy it per branch."""
        _call(_lib.dintattn_session_copy, self._h, other._h)

    def prefill(self, tokens, all_logits=False):
        """Runs tokens after those held; returns the last one's logits [vocab], or all [n, vocab]."""
        a, V = _ids(tokens), self.model.vocab_size
        out = np.empty((a.size, V) if all_logits else V, dtype=np.float32)
        _call(_lib.dintattn_prefill, self._h, _ptr(a), a.size, _ptr(out, _float_p), int(all_logits))
        return out

    def decode(self, token):
        """Runs one token through the cache; returns its logits [vocab]."""
        out = np.empty(self.model.vocab_size, dtype=np.float32)
        _call(_lib.dintattn_decode, self._h, _id(token), _ptr(out, _float_p))
        return out

    def logprobs(self, tokens):
        """Runs tokens as prefill does; returns [n - 1] float32: log p(tokens[i + 1] | what precedes)."""
        a = _ids(tokens)
        out = np.empty(max(a.size - 1, 1), dtype=np.float32)
        _call(_lib.dintattn_logprobs, self._h, _ptr(a), a.size, _ptr(out, _float_p))
        return out[:max(a.size - 1, 0)]

    def act_start(self, top_k=10):
        """Starts collecting activation statistics (dintattn_session_act_start: per layer, the attention
        logits of each map, the FFN's input and the hidden states) over the tokens run from now on."""
        _call(_lib.dintattn_session_act_start, self._h, ctypes.byref(_ActOptions(int(top_k))))

    def act_stop(self):
        """Stops collecting and frees the statistics."""
        _lib.dintattn_session_act_stop(self._h)

    def act_stats(self, layer, kind):
        """The statistics of kind ("logits1", "logits2", "ffn_in", "hidden") in layer so far
        (dintattn_session_act_stats): a dict of count, nonfinite, k, top1, topk, median, ratio, mean,
        std, kurtosis, and top (the k largest magnitudes, descending, float32)."""
        if kind not in ACT_KINDS:
            raise ValueError("kind must be one of %s, not %r" % (", ".join(ACT_KINDS), kind))
        out, top = _ActStats(), np.empty(65536, dtype=np.float32)
        _call(_lib.dintattn_session_act_stats, self._h, int(layer), ACT_KINDS.index(kind), ctypes.byref(out),
              _ptr(top, _float_p), top.size)
        d = {f[0]: getattr(out, f[0]) for f in _ActStats._fields_}
        d["top"] = top[:out.k].copy()
        return d

    def capture_attention(self, layers=None, heads=None, positions=None, terms=False):
        """with sess.capture_attention() as cap: ... -- cap.rows[(layer, head, pos)] is the final attention
        row W[pos, 0..pos] of each signal head the session computes meanwhile (layers / heads: only these;
        positions: a range of query positions). terms=True also keeps cap.terms[(layer, head, pos)], a
        dict of the row's A1, A2, I (None where the family has none) and lambda."""
        return AttentionCapture(self, layers, heads, positions, terms)

    def generate_ids(self, ids, max_tokens=256, sampler=None, tokenizer=None):
        """Prefills ids after the tokens held, then yields up to max_tokens drawn ids (greedy without a
        sampler), stopping before an EOS id of `tokenizer` (if given) or at the context's end.
        Afterwards self.stop_reason says why it stopped: "eos", "max_tokens" or "context" (the
        context is full: a longer answer needs a larger n_ctx)."""
        sampler = sampler or Sampler(self.model.vocab_size)
        self.stop_reason = None
        logits = self.prefill(ids)
        for _ in range(max_tokens):
            token = sampler.sample(logits)
            if tokenizer is not None and tokenizer.is_eos(token):
                self.stop_reason = "eos"
                return
            sampler.accept(token)
            yield token
            if self.pos >= self.n_ctx:
                self.stop_reason = "context"
                return
            logits = self.decode(token)
        self.stop_reason = "max_tokens"

    def generate(self, prompt, max_tokens=256, tokenizer=None, temperature=0.8, top_k=40, top_p=0.95, min_p=0.05,
                 repeat_penalty=1.1, repeat_last_n=0, seed=None):
        """Streams the text that follows prompt, a piece per token (complete UTF-8 characters only; a
        token that ends inside a character waits for the next). As examples/generate (the same defaults):
        the model's BOS first on an empty session, the prompt's ids seen by the repetition penalty, stop at
        EOS. temperature=0 is greedy; seed=None draws a seed. Continues the tokens the session holds.
        self.stop_reason then says why it stopped, as after generate_ids."""
        tok = tokenizer or self.model.tokenizer()
        ids = tok.encode_prompt(prompt) if self.pos == 0 else tok.encode(prompt)
        if seed is None:
            seed = int.from_bytes(os.urandom(8), "little")
        sampler = Sampler(self.model.vocab_size, temperature, top_k, top_p, min_p, repeat_penalty, repeat_last_n, seed)
        for t in ids:
            sampler.accept(t)
        utf8 = codecs.getincrementaldecoder("utf-8")("replace")
        for token in self.generate_ids(ids, max_tokens, sampler, tok):
            if not tok.has_token(token):  # an id of the model's vocabulary the tokenizer lacks: no text
                continue
            piece = utf8.decode(tok.token_bytes(token))
            if piece:
                yield piece
        tail = utf8.decode(b"", final=True)  # bytes of a character that never completed: U+FFFD
        if tail:
            yield tail


def step(items, all_logits=False, max_tokens=0):
    """Advances several sessions of one model in one pass over the weights (dintattn_batch_step):
    items is a list of (session, tokens) -- one token decodes, more run a chunk of that session's
    prompt; any mix, each session at most once. Returns each item's logits: its last token's
    [vocab], or with all_logits every token's [n, vocab]. max_tokens bounds the tokens stacked per
    pass (0: the first session's n_batch). On error no session is changed (DintattnError with the
    library's message, naming the item)."""
    items = list(items)
    c_items = (_BatchItem * max(len(items), 1))()
    keep, outs = [], []
    for k, (sess, tokens) in enumerate(items):
        if not isinstance(sess, Session):
            raise TypeError("item %d: a Session is needed, not %s" % (k, type(sess).__name__))
        a = _ids(tokens)
        V = sess.model.vocab_size
        out = np.empty((a.size, V) if all_logits else V, dtype=np.float32)
        keep.append(a)
        outs.append(out)
        c_items[k].sess, c_items[k].tokens, c_items[k].n_tokens = sess._h, _ptr(a), a.size
        c_items[k].logits, c_items[k].all_logits = _ptr(out, _float_p), int(bool(all_logits))
    opt = _BatchOptions(int(max_tokens))
    _call(_lib.dintattn_batch_step, c_items, len(items), ctypes.byref(opt))
    return outs


def generate_batch(model, prompts, max_tokens=256, tokenizer=None, temperature=0.8, top_k=40, top_p=0.95, min_p=0.05,
                   repeat_penalty=1.1, repeat_last_n=0, seed=None, n_ctx=0, n_threads=1, precision="auto", kv="f32"):
    """The texts that follow each of prompts, generated together: a session per prompt, the prompts
    prefilled and every step's tokens decoded in one pass over the weights (step). Each prompt is
    encoded and sampled as Session.generate does on an empty session (BOS first, the prompt's ids
    seen by the repetition penalty, stop at EOS, the context's end or max_tokens); prompt k draws
    with seed + k, so its text is what Session.generate(prompt, seed=seed + k) gives alone (up to
    the last bits of batched arithmetic). Returns a list of strings."""
    tok = tokenizer or model.tokenizer()
    if seed is None:
        seed = int.from_bytes(os.urandom(8), "little") >> 8
    prompts = list(prompts)
    if not prompts:
        return []
    sessions, samplers, texts, going, pending = [], [], [], [], []
    items = []
    for k, prompt in enumerate(prompts):
        ids = tok.encode_prompt(prompt)
        sess = Session(model, n_ctx=n_ctx, n_threads=n_threads, precision=precision, kv=kv)
        smp = Sampler(model.vocab_size, temperature, top_k, top_p, min_p, repeat_penalty, repeat_last_n, seed + k)
        for t in ids:
            smp.accept(t)
        sessions.append(sess)
        samplers.append(smp)
        texts.append(bytearray())
        going.append(max_tokens > 0)
        pending.append(0)
        items.append((sess, ids))
    logits = step(items)
    n_gen = [0] * len(prompts)
    while True:
        items, where = [], []
        for k, sess in enumerate(sessions):
            if not going[k]:
                continue
            token = samplers[k].sample(logits[k])
            if tok.is_eos(token):
                going[k] = False
                continue
            samplers[k].accept(token)
            n_gen[k] += 1
            if tok.has_token(token):
                texts[k] += tok.token_bytes(token)
            if n_gen[k] >= max_tokens or sess.pos >= sess.n_ctx:
                going[k] = False
                continue
            items.append((sess, [token]))
            where.append(k)
        if not items:
            break
        for k, out in zip(where, step(items)):
            logits[k] = out
    for sess in sessions:
        sess.close()
    return [bytes(t).decode("utf-8", "replace") for t in texts]


class AttentionCapture:
    """Attention rows collected through dintattn_session_inspect (on the calling thread):
    rows[(layer, head, pos)] is the final row W[pos, 0..pos] (after A1, A2 and DINT's integral
    combine) as float32; with terms, terms[(layer, head, pos)] = {"A1", "A2", "I", "lambda"}."""

    def __init__(self, session, layers=None, heads=None, positions=None, terms=False):
        self.session, self.rows, self.terms, self._error, self._keep_terms = session, {}, {}, None, terms
        cfg = session.model.config
        self.layers = None if layers is None else frozenset(layers)
        self.heads = None if heads is None else frozenset(heads)
        for what, chosen, n in (("layer", self.layers, cfg.n_layers), ("head", self.heads, cfg.n_heads)):
            if chosen is not None and any(not 0 <= int(x) < n for x in chosen):
                raise ValueError("a %s to capture is out of range [0, %d): %s" % (what, n, sorted(chosen)))
        self._flags = [None if sel is None else (ctypes.c_ubyte * n)(*[i in sel for i in range(n)])
                       for sel, n in ((self.layers, cfg.n_layers), (self.heads, cfg.n_heads))]
        if positions is None:  # every position: [0, no end)
            first, end = 0, 0
        elif isinstance(positions, (range, slice)):
            first, end = positions.start or 0, positions.stop or 0
        else:
            first, end = int(positions), int(positions) + 1
        flags = [None if f is None else ctypes.cast(f, c_void_p) for f in self._flags]
        self._insp = _Inspect(_ROW(self._on_row), None, flags[0], flags[1], first, end)

    def _on_row(self, user, row):
        # the buffers are the library's, valid during the call: copy them
        try:
            r = row.contents
            n = r.n_keys
            copy = (lambda p: None if not p else np.ctypeslib.as_array(p, shape=(n,)).copy())
            key = (r.layer, r.head, r.pos)
            self.rows[key] = copy(r.W)
            if self._keep_terms:
                self.terms[key] = {"A1": copy(r.A1), "A2": copy(r.A2), "I": copy(r.integral), "lambda": r.lambda_}
        except BaseException as e:  # an exception cannot cross C: raised at the with-block's end
            self._error = self._error or e

    def __enter__(self):
        if self.session._capture is not None:
            raise ValueError("the session is already capturing attention")
        _call(_lib.dintattn_session_inspect, self.session._h, ctypes.byref(self._insp))
        self.session._capture = self
        return self

    def __exit__(self, *exc):
        _call(_lib.dintattn_session_inspect, self.session._h, None)
        self.session._capture = None
        if self._error is not None and exc[0] is None:
            raise self._error

    def matrix(self, layer, head):
        """The captured rows of (layer, head) as one [P, P] float32 matrix, P the last position + 1:
        W[pos, :pos + 1] is row pos, zeros above the diagonal, NaN rows for positions not captured."""
        got = {pos: w for (l, h, pos), w in self.rows.items() if l == layer and h == head}
        if not got:
            raise KeyError("no rows captured for layer %d, head %d" % (layer, head))
        P = max(got) + 1
        out = np.full((P, P), np.nan, dtype=np.float32)
        for pos, w in got.items():
            out[pos] = 0
            out[pos, :pos + 1] = w
        return out


def attention_stats(w, spans=()):
    """dintattn_attn_stats_of: a row's sum, negative sum and share, entropy of |w| / sum |w| (nats),
    and its mass on the key spans [(a, b), ...] ("attention to the answer") and elsewhere."""
    w = np.ascontiguousarray(w, dtype=np.float32)
    flat = (c_int * (2 * len(spans)))(*[int(x) for ab in spans for x in ab])
    out = _AttnStats()
    _lib.dintattn_attn_stats_of(w.ctypes.data_as(_float_p), w.size, flat, len(spans), ctypes.byref(out))
    return {k: getattr(out, k) for k, _ in _AttnStats._fields_}
