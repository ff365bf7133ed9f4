"""RoPE as Hugging Face configs describe it, for the converter tests' re-implementations (DiffLlama,
Motif, DIFF V2): inverse frequencies from rope_scaling / rope_parameters (rope_type or legacy type;
linear, llama3, yarn) by test_reference_v11.inv_freq_python (transformers' modeling_rope_utils
formulas, written there), YaRN's attention factor on cos and sin, and partial_rotary_factor
(rope_dim = int(head_dim * factor), only the first rope_dim components rotated, as GPT-NeoX /
Phi / GLM do).  Not a test itself (run.sh runs test_*.py only)."""

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_reference_v11 import inv_freq_python  # noqa: E402


def hf_scaling(cfg):
    """HF config -> docs/format.md section 3's {"type", fields} (yarn's original context defaulted) or None."""
    rs = cfg.get("rope_scaling") or cfg.get("rope_parameters")
    if not rs:
        return None
    rs = {k: v for k, v in rs.items() if v is not None and k != "rope_theta"}
    typ = rs.pop("rope_type", None) or rs.pop("type", None) or "default"
    rs.pop("type", None)
    if typ == "default":
        return None
    rs["type"] = typ
    if typ == "yarn" and "original_max_position_embeddings" not in rs:
        rs["original_max_position_embeddings"] = cfg["max_position_embeddings"]
    return rs


def cos_sin(cfg, head_dim, n, theta=None, interleaved=False):
    """cos, sin [n, r] (already times the attention factor) and r, for positions 0..n-1."""
    theta = theta if theta is not None else (cfg.get("rope_theta") or (cfg.get("rope_parameters") or {}).get(
        "rope_theta") or 10000.0)
    r = int(head_dim * (cfg.get("partial_rotary_factor") or 1.0))
    inv, af = inv_freq_python(r, float(theta), hf_scaling(cfg))
    inv = torch.tensor(inv, dtype=torch.float64)
    f = torch.arange(n, dtype=torch.float64)[:, None] * inv[None, :]
    emb = torch.repeat_interleave(f, 2, -1) if interleaved else torch.cat((f, f), -1)
    return emb.cos() * af, emb.sin() * af, r


def apply_halves(x, cos, sin):
    """NeoX / Llama rotate_half on the first r = cos.shape[-1] components of x's last axis."""
    r = cos.shape[-1]
    xr, xp = x[..., :r], x[..., r:]
    h = r // 2
    rot = torch.cat((-xr[..., h:], xr[..., :h]), -1)
    return torch.cat((xr * cos + rot * sin, xp), -1)


def apply_interleaved(x, cos, sin):
    """GPT-J pairs (2k, 2k+1) on the first r components (cos / sin repeated per pair)."""
    r = cos.shape[-1]
    xr, xp = x[..., :r], x[..., r:]
    rot = torch.stack((-xr[..., 1::2], xr[..., 0::2]), -1).reshape(xr.shape)
    return torch.cat((xr * cos + rot * sin, xp), -1)
