"""Hugging Face RoPE settings (config.json) -> version 1.1 keys (rope_theta, rope_dim, rope_scaling: docs/format.md section 3).

Not a layout (convert.py's FORMATS does not list it): the diffllama, motif and diffv2 layouts
call hf_rope(config, head_dim, what).

HF writes scaling as `rope_scaling` {"rope_type" (or the legacy "type"): ..., fields} and, in
transformers >= 5, as `rope_parameters` {"rope_type", "rope_theta", fields}; the dintattn file
writes {"type": ..., fields} (docs/format.md section 3).  Accepted types: "default" (no scaling), "linear"
(factor), "llama3" (factor, low_freq_factor, high_freq_factor, original_max_position_embeddings),
"yarn" (factor, original_max_position_embeddings -- taken from max_position_embeddings when the
config omits it, as transformers does -- and optionally beta_fast, beta_slow, mscale,
mscale_all_dim, attention_factor, truncate).  Fields whose value is null are dropped (HF writes
some as null).  Any other type ("dynamic", "longrope", ...) or field is refused by name.

`partial_rotary_factor` f gives rope_dim = int(head_dim * f) (transformers' own rounding); it
must come out even and at least 2.
"""

import math

from layouts import ConvertError

FIELDS = {
    "linear": (("factor",), ()),
    "llama3": (("factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"), ()),
    "yarn": (("factor", "original_max_position_embeddings"),
             ("beta_fast", "beta_slow", "mscale", "mscale_all_dim", "attention_factor", "truncate")),
}


def _num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def scaling(rs, max_pos, what, key="rope_scaling"):
    """One HF rope_scaling / rope_parameters object -> (the file's rope_scaling dict or None, rope_theta
    or None when the object does not set it)."""
    if rs is None:
        return None, None
    if not isinstance(rs, dict):
        raise ConvertError("%s: %s %r is not an object" % (what, key, rs))
    rs = {k: v for k, v in rs.items() if v is not None}
    t1, t2 = rs.pop("rope_type", None), rs.pop("type", None)
    if t1 is not None and t2 is not None and t1 != t2:
        raise ConvertError("%s: %s has rope_type %r and type %r" % (what, key, t1, t2))
    typ = t1 if t1 is not None else (t2 if t2 is not None else "default")
    theta = rs.pop("rope_theta", None)
    if theta is not None and not (_num(theta) and theta > 0):
        raise ConvertError("%s: %s rope_theta %r is not a positive number" % (what, key, theta))
    if typ == "default":
        if rs:
            raise ConvertError("%s: %s of type 'default' has field %r" % (what, key, sorted(rs)[0]))
        return None, theta
    if typ not in FIELDS:
        raise ConvertError("%s: %s type %r is not supported (linear, llama3, yarn)" % (what, key, typ))
    required, optional = FIELDS[typ]
    if typ == "yarn" and "original_max_position_embeddings" not in rs and max_pos:
        rs["original_max_position_embeddings"] = max_pos
    for k, v in sorted(rs.items()):
        if k not in required and k not in optional:
            raise ConvertError("%s: %s of type %r: field %r is not supported" % (what, key, typ, k))
        if k == "truncate":
            if not isinstance(v, bool):
                raise ConvertError("%s: %s field 'truncate' = %r is not a bool" % (what, key, v))
        elif not _num(v):
            raise ConvertError("%s: %s field %r = %r is not a number" % (what, key, k, v))
    for k in required:
        if k not in rs:
            raise ConvertError("%s: %s of type %r lacks %r" % (what, key, typ, k))
    if not rs["factor"] >= 1:
        raise ConvertError("%s: %s factor %r is below 1" % (what, key, rs["factor"]))
    out = {"type": typ}
    out.update(rs)
    return out, theta


def hf_rope(cfg, head_dim, what="config.json", default_theta=10000.0):
    """-> {"rope_theta": T[, "rope_dim": r][, "rope_scaling": {...}]} from an HF config."""
    max_pos = cfg.get("max_position_embeddings")
    rs, theta1 = scaling(cfg.get("rope_scaling"), max_pos, what)
    rp, theta2 = scaling(cfg.get("rope_parameters"), max_pos, what, "rope_parameters")
    if rs is not None and rp is not None and rs != rp:
        raise ConvertError("%s: rope_scaling and rope_parameters disagree" % what)
    # rope_parameters' rope_theta (transformers 5) wins over rope_scaling's and the top-level key
    theta = cfg.get("rope_theta")
    for t in (theta1, theta2):
        if t is not None:
            theta = t
    theta = default_theta if theta is None else theta
    if not (_num(theta) and theta > 0):
        raise ConvertError("%s: rope_theta %r is not a positive number" % (what, theta))
    out = {"rope_theta": float(theta)}
    scal = rs if rs is not None else rp
    if scal is not None:
        out["rope_scaling"] = scal
    prf = cfg.get("partial_rotary_factor", 1.0)
    if prf is None:
        prf = 1.0
    if not (_num(prf) and 0 < prf <= 1):
        raise ConvertError("%s: partial_rotary_factor %r is not in (0, 1]" % (what, prf))
    if prf != 1:
        r = int(head_dim * prf)
        if r < 2 or r % 2:
            raise ConvertError("%s: partial_rotary_factor %r gives rope_dim %d (head_dim %d * factor): it must be "
                               "even and at least 2" % (what, prf, r, head_dim))
        if r != head_dim:
            out["rope_dim"] = r
    return out


def inv_freq(config):
    """The inv_freq of a dintattn config's RoPE (tools/reference.py's computation), float64."""
    import reference   # tools/reference.py (convert.py puts tools/ on sys.path)
    try:
        rs = config.get("rope_scaling")
        c = {"rope_dim": config.get("rope_dim", config["head_dim"]), "rope_theta": config["rope_theta"],
             "rope_scaling_values": None if rs is None else reference.resolve_rope_scaling(rs)}
        return reference.rope_inv_freq(c)[0]
    except ValueError as e:
        raise ConvertError("RoPE settings: %s" % e)
