#!/usr/bin/python3
"""Train a small DINT Transformer (docs/format.md, attention "dint") on the King James Bible, on CPU;
or a DIFF or standard Transformer of the same parameter count (--attention; tools/replicate.py
trains the three for the replication in docs/replication.md).

Run with Debian's python3 (apt-get install -y python3-torch python3-regex bible-kjv):

  1. tokenizer (tools/train_tokenizer.py, a few seconds):
       /usr/bin/python3 tools/train_tokenizer.py /tmp/train/kjv.tiktoken

  2. check the export against tools/reference.py and the C engine (examples/logits):
       /usr/bin/python3 tools/train.py verify --ranks /tmp/train/kjv.tiktoken [--size small]

  3. measure training throughput of candidate sizes:
       /usr/bin/python3 tools/train.py bench --ranks /tmp/train/kjv.tiktoken --size small,base

  4. train until a wall-clock deadline, then export:
       /usr/bin/python3 tools/train.py train --ranks /tmp/train/kjv.tiktoken --size base \\
           --deadline 18:45 --out models/dint-kjv.safetensors --workdir /tmp/train

Common options:
  --ranks FILE        tiktoken rank file from train_tokenizer.py (vocab = ranks + 1 special)
  --corpus FILE       saved output of `bible -f Gen1:1-Rev22:21` (default: run `bible`)
  --size NAME[,NAME]  model size preset (see SIZES below), or --dim/--layers/--heads/--hidden
  --ctx N             training context / max_seq_len (256)
  --threads N         torch threads (2); train: 0 = switch between 1 and 2 by measured speed
  --attention F       dint (default), diff or standard (make_config says how the sizes map)
train options:
  --deadline HH:MM    UTC wall-clock time at which training stops and the final model is
                      exported (or --minutes M from start); the LR follows warmup + cosine
                      decay over exactly this time budget
  --out PATH          final BF16 model (.safetensors with config, tokenizer metadata and the
                      `tokenizer.ranks` U8 tensor); also rewritten at every checkpoint, so a
                      usable model exists from the first checkpoint on
  --workdir DIR       checkpoints (ckpt.pt: model+optimizer+step, resumable with --resume)
  --ckpt-minutes M    checkpoint + validation + export period (5)
  --steps N           train N steps instead (the LR schedule runs over steps: equal tokens for
                      models of different speed)
  --init CKPT         start from a checkpoint's weights with a new optimizer and schedule
  --batch B --accum K --lr LR --warmup STEPS --wd WD
                      (--accum: each batch in K micro-batches, the same gradient in less memory)

Data: every chapter is one document, encoded as [<|endoftext|>] + tokens(chapter text); the
chapters are concatenated.  <|endoftext|> (id = vocab-1) thus marks both the start of a
document and the end of the previous one: bos_id = eos_id = that id.  Every 20th chapter
(index % 20 == 19) is held out for validation; validation loss is the mean next-token loss
(nats/token) over non-overlapping ctx-long windows of the held-out stream.

The exported model is the checkpoint with the best validation loss seen so far.

Metadata written (safetensors __metadata__):
  format "dintattn", version "1", config (JSON), tokenizer (JSON):
  {"type": "tiktoken", "pattern": "cl100k", "special_tokens": {"<|endoftext|>": V-1},
   "bos_id": V-1, "eos_id": V-1}
plus the U8 tensor `tokenizer.ranks` [nbytes] = the rank file's bytes verbatim.
"""

import datetime
import json
import math
import os
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

TOOLS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TOOLS)
sys.path.insert(0, TOOLS)
import cli                  # noqa: E402
import safetensors_io        # noqa: E402
import spec                  # noqa: E402  (the format's rules the tools share)
import train_tokenizer       # noqa: E402  (corpus, rank file, encoder)

SIZES = {
    # name: (dim, n_layers, n_heads, hidden_dim); head_dim = dim / (2 * n_heads), v_head_dim = 2d
    "tiny": (128, 4, 4, 352),
    "small": (192, 6, 4, 512),
    "base": (256, 6, 4, 688),
    "wide": (320, 6, 5, 864),
    "deep": (256, 8, 4, 688),
}


lambda_init_depth = spec.lambda_init_depth   # the "depth" rule: tools/spec.py


FAMILIES = ("dint", "diff", "standard")


def make_config(dim, n_layers, n_heads, hidden, vocab, ctx, attention="dint"):
    """The config (docs/format.md section 2) of a model of `n_heads` differential heads of width d = dim / (2 n_heads).
    Every family has the same parameter count (DIFF paper, section 3): DIFF and DINT have H heads
    with q1, q2, k1, k2 of width d and values of width 2d; the standard Transformer has 2H heads of
    width d (q, k and v), no head norm and no lambda. DIFF scales heads by 1 - lambda_init, DINT
    does not (DINT paper, 2.3)."""
    d = dim // (2 * n_heads)
    c = {
        "dim": dim, "n_layers": n_layers, "vocab_size": vocab, "hidden_dim": hidden,
        "max_seq_len": ctx, "n_heads": n_heads, "head_dim": d, "v_head_dim": 2 * d,
        "n_k1_heads": n_heads, "n_q2_heads": n_heads, "n_k2_heads": n_heads,
        "n_v_heads": n_heads, "attention": attention, "integral": "softmax", "qk_rank": 0,
        "lambda_init": "depth", "head_norm": True, "head_norm_type": "rms",
        "head_scale": "one_minus_lambda_init" if attention == "diff" else "none",
        "rope": "interleaved", "rope_theta": 10000.0,
        "norm_eps": 1e-5, "head_norm_eps": 1e-5, "ffn_act": "silu", "tie_embeddings": True,
    }
    if attention == "standard":
        c.update({"n_heads": 2 * n_heads, "v_head_dim": d, "n_k1_heads": 2 * n_heads,
                  "n_q2_heads": 0, "n_k2_heads": 0, "n_v_heads": 2 * n_heads,
                  "head_norm": False})
        del c["integral"], c["lambda_init"]
    elif attention == "diff":
        del c["integral"]
    elif attention != "dint":
        raise ValueError("attention must be one of %s" % ", ".join(FAMILIES))
    return c


# ---------------------------------------------------------------------------------------------
# model (docs/format.md, attention "dint", dense Q/K, one head per projection and signal head)
# ---------------------------------------------------------------------------------------------

class RMSNorm(nn.Module):
    def __init__(self, n, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(d, n, theta):
    inv = theta ** (-torch.arange(0, d // 2, dtype=torch.float64) * 2.0 / d)
    ang = torch.arange(n, dtype=torch.float64)[:, None] * inv[None, :]     # [N, d/2]
    return torch.cos(ang), torch.sin(ang)                                  # float64


def apply_rope(x, cos, sin):
    """x [B, H, N, d], interleaved pairs (2k, 2k+1)."""
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)


class Attention(nn.Module):
    """Attention "standard", "diff" or "dint" with dense Q/K, one head per projection and
    signal head."""

    def __init__(self, c, l):
        super().__init__()
        D, H, d, dv = c["dim"], c["n_heads"], c["head_dim"], c["v_head_dim"]
        self.H, self.d, self.dv = H, d, dv
        self.family = c["attention"]
        self.lambda_init = lambda_init_depth(l)
        self.head_scale = (1.0 - self.lambda_init) if c["head_scale"] == "one_minus_lambda_init" else 1.0
        self.wq1 = nn.Linear(D, H * d, bias=False)
        self.wk1 = nn.Linear(D, H * d, bias=False)
        self.wv = nn.Linear(D, H * dv, bias=False)
        self.wo = nn.Linear(H * dv, D, bias=False)
        if self.family == "standard":
            return
        self.wq2 = nn.Linear(D, H * d, bias=False)
        self.wk2 = nn.Linear(D, H * d, bias=False)
        self.lambda_q1 = nn.Parameter(torch.zeros(d))
        self.lambda_k1 = nn.Parameter(torch.zeros(d))
        self.lambda_q2 = nn.Parameter(torch.zeros(d))
        self.lambda_k2 = nn.Parameter(torch.zeros(d))
        self.head_norm = RMSNorm(dv, c["head_norm_eps"])

    def lam(self):
        return (torch.exp(torch.dot(self.lambda_q1, self.lambda_k1))
                - torch.exp(torch.dot(self.lambda_q2, self.lambda_k2)) + self.lambda_init)

    def forward(self, x, cos, sin, mask, tril_div):
        B, N, _ = x.shape
        H, d, dv = self.H, self.d, self.dv

        def heads(w, width):
            return w(x).view(B, N, H, width).transpose(1, 2)               # [B, H, N, w]

        q1 = apply_rope(heads(self.wq1, d), cos, sin)
        k1 = apply_rope(heads(self.wk1, d), cos, sin)
        v = heads(self.wv, dv)
        s = 1.0 / math.sqrt(d)
        A1 = torch.softmax((q1 @ k1.transpose(-1, -2) * s).masked_fill(mask, float("-inf")), -1)
        if self.family == "standard":
            o = A1 @ v
        else:
            q2 = apply_rope(heads(self.wq2, d), cos, sin)
            k2 = apply_rope(heads(self.wk2, d), cos, sin)
            A2 = torch.softmax((q2 @ k2.transpose(-1, -2) * s).masked_fill(mask, float("-inf")), -1)
            lam = self.lam()
            W = A1 - lam * A2
            if self.family == "dint":
                # DINT integral: causal column mean of A1, then a causal softmax over it
                # (S = running column sum = tril(ones) @ A1: a matmul is much faster than cumsum
                # over dim -2 on CPU; tril_div already holds the 1/(n+1) row scaling)
                G = tril_div @ A1
                W = W + lam * torch.softmax(G.masked_fill(mask, float("-inf")), -1)
            o = self.head_norm(W @ v) * self.head_scale                    # [B, H, N, dv]
        return self.wo(o.transpose(1, 2).reshape(B, N, H * dv))


class FFN(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.w_gate = nn.Linear(c["dim"], c["hidden_dim"], bias=False)
        self.w_up = nn.Linear(c["dim"], c["hidden_dim"], bias=False)
        self.w_down = nn.Linear(c["hidden_dim"], c["dim"], bias=False)

    def forward(self, x):
        return self.w_down(F.silu(self.w_gate(x)) * self.w_up(x))


class Block(nn.Module):
    def __init__(self, c, l):
        super().__init__()
        self.attn_norm = RMSNorm(c["dim"], c["norm_eps"])
        self.attn = Attention(c, l)
        self.ffn_norm = RMSNorm(c["dim"], c["norm_eps"])
        self.ffn = FFN(c)

    def forward(self, x, cos, sin, mask, tril_div):
        x = x + self.attn(self.attn_norm(x), cos, sin, mask, tril_div)
        return x + self.ffn(self.ffn_norm(x))


class Model(nn.Module):
    def __init__(self, c, seed=0):
        super().__init__()
        assert c["tie_embeddings"]
        self.c = c
        self.tok_embeddings = nn.Embedding(c["vocab_size"], c["dim"])
        self.layers = nn.ModuleList(Block(c, l) for l in range(c["n_layers"]))
        self.norm = RMSNorm(c["dim"], c["norm_eps"])
        cos, sin = rope_tables(c["head_dim"], c["max_seq_len"], c["rope_theta"])
        self.register_buffer("cos", cos.float(), persistent=False)
        self.register_buffer("sin", sin.float(), persistent=False)
        self.reset_parameters(seed)

    def reset_parameters(self, seed=0):
        g = torch.Generator().manual_seed(seed)
        L = self.c["n_layers"]
        for name, p in self.named_parameters():
            with torch.no_grad():
                if name.endswith("norm.weight"):
                    p.fill_(1.0)
                elif ".lambda_" in name:
                    p.normal_(0.0, 0.1, generator=g)
                elif name.endswith("wo.weight") or name.endswith("w_down.weight"):
                    p.normal_(0.0, 0.02 / math.sqrt(2 * L), generator=g)
                else:
                    p.normal_(0.0, 0.02, generator=g)

    def forward(self, ids):
        B, N = ids.shape
        mask = torch.ones(N, N, dtype=torch.bool, device=ids.device).triu(1)
        cos, sin = self.cos[:N], self.sin[:N]
        x = self.tok_embeddings(ids)
        # tril_div[n, m] = 1/(n+1) for m <= n: G = tril_div @ A1 is the causal column mean
        n1 = torch.arange(1, N + 1, dtype=x.dtype, device=ids.device)[:, None]
        tril_div = (~mask).to(x.dtype) / n1
        for layer in self.layers:
            x = layer(x, cos, sin, mask, tril_div)
        return self.norm(x) @ self.tok_embeddings.weight.t()

    def spec_tensors(self):
        """{tensor name: float32 numpy array} in docs/format.md section 2's order."""
        t = {"tok_embeddings.weight": self.tok_embeddings.weight, "norm.weight": self.norm.weight}
        for l, b in enumerate(self.layers):
            p = "layers.%d." % l
            a = b.attn
            t[p + "attn_norm.weight"] = b.attn_norm.weight
            t[p + "ffn_norm.weight"] = b.ffn_norm.weight
            for n in ("wq1", "wk1", "wq2", "wk2", "wv", "wo"):
                if hasattr(a, n):
                    t[p + "attn." + n] = getattr(a, n).weight
            if a.family != "standard":
                for n in ("lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2"):
                    t[p + "attn." + n] = getattr(a, n)
                t[p + "attn.head_norm.weight"] = a.head_norm.weight
            for n in ("w_gate", "w_up", "w_down"):
                t[p + "ffn." + n] = getattr(b.ffn, n).weight
        return {k: v.detach().cpu().float().numpy().copy() for k, v in t.items()}

    def lambdas(self):
        """Each layer's lambda (docs/format.md section 1), or "" for standard attention."""
        if self.c["attention"] == "standard":
            return ""
        return ",".join("%.3f" % b.attn.lam().item() for b in self.layers)


DINT = Model


def tokenizer_meta(vocab):
    eot = vocab - 1
    return {"type": "tiktoken", "pattern": "cl100k", "special_tokens": {"<|endoftext|>": eot},
            "bos_id": eot, "eos_id": eot}


def export(model, path, dtype="BF16", ranks_path=None):
    """Write the model as a dintattn .safetensors file (atomically: tmp file + rename)."""
    c = model.c
    tensors = {k: (dtype, v) for k, v in model.spec_tensors().items()}
    meta = {"format": "dintattn", "version": "1", "config": json.dumps(c)}
    if ranks_path:
        with open(ranks_path, "rb") as f:
            raw = f.read()
        tensors["tokenizer.ranks"] = ("U8", np.frombuffer(raw, dtype=np.uint8))
        meta["tokenizer"] = json.dumps(tokenizer_meta(c["vocab_size"]))
    tmp = path + ".tmp"
    safetensors_io.write(tmp, tensors, meta)
    os.replace(tmp, path)


def round_bf16_(model):
    """Round every parameter to bf16 in place, exactly as the BF16 export rounds it (to compare
    with that export)."""
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.from_numpy(safetensors_io.round_bf16(p.detach().cpu().float().numpy())))


# ---------------------------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------------------------

def load_data(ranks_path, corpus=None):
    ranks = train_tokenizer.load_ranks(ranks_path)
    vocab = len(ranks) + 1
    eot = vocab - 1
    enc = train_tokenizer.Encoder(ranks)
    train, val = [], []
    for i, (_, _, text) in enumerate(train_tokenizer.kjv_chapters(corpus)):
        (val if i % 20 == 19 else train).extend([eot] + enc.encode(text))
    return vocab, torch.tensor(train, dtype=torch.long), torch.tensor(val, dtype=torch.long)


def batch(data, B, N, gen):
    ix = torch.randint(0, len(data) - N - 1, (B,), generator=gen)
    x = torch.stack([data[i:i + N] for i in ix])
    y = torch.stack([data[i + 1:i + N + 1] for i in ix])
    return x, y


@torch.no_grad()
def evaluate(model, val, N, B=16):
    model.eval()
    nwin = (len(val) - 1) // N
    tot, cnt = 0.0, 0
    for s in range(0, nwin, B):
        idx = range(s, min(s + B, nwin))
        x = torch.stack([val[i * N:i * N + N] for i in idx])
        y = torch.stack([val[i * N + 1:i * N + N + 1] for i in idx])
        loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten(), reduction="sum")
        tot += loss.item()
        cnt += y.numel()
    model.train()
    return tot / cnt


def config_from_args(a, vocab):
    if a.dim:
        return make_config(a.dim, a.layers, a.heads, a.hidden, vocab, a.ctx, a.attention)
    return make_config(*SIZES[a.size], vocab, a.ctx, a.attention)


def nparams(model):
    return sum(p.numel() for p in model.parameters())


def make_optimizer(model, lr, wd):
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    other = [p for n, p in model.named_parameters() if p.dim() < 2]
    return torch.optim.AdamW([{"params": decay, "weight_decay": wd},
                              {"params": other, "weight_decay": 0.0}],
                             lr=lr, betas=(0.9, 0.95), eps=1e-8)


def log(msg, f=None):
    line = "%s %s" % (datetime.datetime.utcnow().strftime("%H:%M:%S"), msg)
    print(line, flush=True)


# ---------------------------------------------------------------------------------------------
# commands
# ---------------------------------------------------------------------------------------------

def cmd_verify(a):
    """Export a random model in F32 (and BF16) and compare torch / reference.py / C logits."""
    ranks = train_tokenizer.load_ranks(a.ranks)
    vocab = len(ranks) + 1
    c = config_from_args(a, vocab)
    torch.manual_seed(1)
    model = DINT(c)
    # make the math non-trivial: peaky attention, lambdas well away from lambda_init,
    # non-unit norm weights, larger embeddings
    with torch.no_grad():
        for n, p in model.named_parameters():
            if any(n.endswith(s) for s in ("wq1.weight", "wk1.weight", "wq2.weight", "wk2.weight")):
                p.normal_(0.0, 2.0 / math.sqrt(c["dim"]))
            elif n.endswith("norm.weight"):
                p.copy_(1.0 + 0.1 * torch.randn_like(p))
            elif ".lambda_" in n:
                p.normal_(0.0, 0.3)
            elif n.startswith("tok_embeddings"):
                p.normal_(0.0, 1.0)
            elif n.endswith("wv.weight") or n.endswith("w_gate.weight") or n.endswith("w_up.weight"):
                p.normal_(0.0, 1.0 / math.sqrt(c["dim"]))
            elif n.endswith("wo.weight") or n.endswith("w_down.weight"):
                p.normal_(0.0, 1.0 / math.sqrt(p.shape[1]))
    print("lambdas:", model.lambdas())
    enc = train_tokenizer.Encoder(ranks)
    text = "In the beginning God created the heaven and the earth. And the earth was without form"
    ids = ([vocab - 1] + enc.encode(text) * 8)[:a.verify_len]
    ids_s = ",".join(map(str, ids))
    os.makedirs(a.workdir, exist_ok=True)
    ok = True
    for dtype in ("F32", "BF16"):
        if dtype == "BF16":
            round_bf16_(model)
        path = os.path.join(a.workdir, "verify_%s.safetensors" % dtype.lower())
        export(model, path, dtype=dtype, ranks_path=None)
        with torch.no_grad():
            mt = model(torch.tensor([ids]))[0].double().numpy()
        # float64 torch too (the reference is float64)
        m64 = DINT(c).double()
        m64.load_state_dict(model.state_dict())
        m64.cos, m64.sin = rope_tables(c["head_dim"], c["max_seq_len"], c["rope_theta"])
        with torch.no_grad():
            m64t = m64(torch.tensor([ids]))[0].numpy()
        outs = {"torch_f32": mt, "torch_f64": m64t}
        ref_out = path + ".ref.bin"
        subprocess.run(["/usr/bin/python3", os.path.join(TOOLS, "reference.py"), path, ids_s,
                        ref_out], check=True)
        outs["reference"] = np.fromfile(ref_out, dtype="<f4").reshape(len(ids), vocab)
        cbin = os.path.join(ROOT, "examples", "logits")
        if os.path.exists(cbin):
            c_out = path + ".c.bin"
            r = subprocess.run([cbin, path, ids_s, c_out], capture_output=True, text=True)
            if r.returncode == 0:
                outs["C"] = np.fromfile(c_out, dtype="<f4").reshape(len(ids), vocab)
            else:
                print("C engine failed:", r.stdout, r.stderr)
                ok = False
        else:
            print("no examples/logits (run `make examples/logits`)")
        base = outs["reference"].astype(np.float64)
        scale = np.abs(base).max()
        print("%s: N=%d vocab=%d, max |logit| = %.3f" % (dtype, len(ids), vocab, scale))
        for k, v in outs.items():
            err = np.abs(v - base).max() / scale
            same_argmax = (v.argmax(-1) == base.argmax(-1)).mean()
            print("  %-10s vs reference: max abs diff / max |logit| = %.2e, argmax agree %.3f"
                  % (k, err, same_argmax))
            if err > 1e-4:
                ok = False
    print("VERIFY", "OK" if ok else "FAILED")
    return 0 if ok else 1


def cmd_bench(a):
    vocab, train, _ = load_data(a.ranks, a.corpus)
    print("train tokens %d" % len(train))
    torch.set_num_threads(a.threads)
    gen = torch.Generator().manual_seed(0)
    for size in a.size.split(","):
        c = make_config(*SIZES[size], vocab, a.ctx, a.attention)
        model = DINT(c)
        opt = make_optimizer(model, a.lr, a.wd)
        times = []
        for step in range(a.bench_steps):
            t0 = time.time()
            x, y = batch(train, a.batch, a.ctx, gen)
            loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            times.append(time.time() - t0)
        t = np.median(times[1:])
        print("%-6s %s params %.2fM (non-emb %.2fM): %.2f s/step, %.0f tokens/s, loss %.3f"
              % (size, SIZES[size], nparams(model) / 1e6,
                 (nparams(model) - vocab * c["dim"]) / 1e6, t, a.batch * a.ctx / t, loss.item()),
              flush=True)
    return 0


def parse_deadline(a, t_start):
    if a.minutes:
        return t_start + 60 * a.minutes
    now = datetime.datetime.utcnow()
    hh, mm = map(int, a.deadline.split(":"))
    dl = now.replace(hour=hh, minute=mm, second=0, microsecond=0)
    if dl < now:
        raise SystemExit("deadline %s UTC is in the past" % a.deadline)
    return t_start + (dl - now).total_seconds()


def cmd_train(a, next_batch=None, data=None, probe=None):
    """Trains until a.steps steps (the LR schedule over steps: the same tokens for every model)
    or until the deadline (the schedule over time). next_batch(gen, step) -> (x, y) replaces the
    KJV batches when given (step: the batch's index, for a curriculum; a third item, when
    returned, weighs each target's loss); data = (vocab, train, val) as load_data returns it;
    probe(model) -> str, when given, is logged at each checkpoint."""
    t_start = time.time()
    deadline = parse_deadline(a, t_start) if not a.steps else float("inf")
    torch.set_num_threads(a.threads or 2)
    vocab, train, val = data or load_data(a.ranks, a.corpus)
    if next_batch is None:
        def next_batch(gen, step):
            return batch(train, a.batch, a.ctx, gen)
    c = config_from_args(a, vocab)
    model = DINT(c, a.seed)
    opt = make_optimizer(model, a.lr, a.wd)
    os.makedirs(a.workdir, exist_ok=True)
    ckpt_path = os.path.join(a.workdir, "ckpt.pt")
    best_path = os.path.join(a.workdir, "best.pt")
    step, best, tokens = 0, float("inf"), 0
    f0 = 0.0                    # schedule fraction already done (resume)
    if a.init:  # weights only: a new optimizer and schedule (a second stage of training)
        model.load_state_dict(torch.load(a.init)["model"])
    if a.resume and os.path.exists(ckpt_path):
        ck = torch.load(ckpt_path)
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["opt"])
        step, best, tokens, f0 = ck["step"], ck["best"], ck["tokens"], ck["frac"]
    t_train0 = time.time()      # LR schedule: fraction f0 -> 1 over [t_train0, deadline]
    log("config %s" % json.dumps(c))
    log("params %.3fM, train %d tokens, val %d tokens, batch %dx%d, %s"
        % (nparams(model) / 1e6, len(train), len(val), a.batch, a.ctx,
           "%d steps" % a.steps if a.steps else
           "deadline in %.1f min" % ((deadline - time.time()) / 60)))
    # a resumed run draws its batches from a generator seeded by the step it resumes at: the
    # same data for the same (seed, resume step), not the uninterrupted run's
    gen = torch.Generator().manual_seed(1234 + step + 1000003 * a.seed)
    budget = deadline - t_train0

    def schedule_frac():
        if a.steps:
            return step / a.steps
        return f0 + (1.0 - f0) * (time.time() - t_train0) / budget
    last_ckpt = time.time()
    # reserve time for the final validation + export
    stop_at = deadline - a.reserve
    t_log, tok_log = time.time(), 0
    ema = None

    def checkpoint(final=False):
        nonlocal best
        vl = evaluate(model, val, a.ctx)
        frac = schedule_frac()
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step,
                    "best": min(best, vl), "tokens": tokens, "config": c,
                    "frac": frac}, ckpt_path + ".tmp")
        os.replace(ckpt_path + ".tmp", ckpt_path)
        tag = ""
        if vl < best or (a.export_last and final):
            best = min(best, vl)
            torch.save({"model": model.state_dict(), "step": step, "val": vl, "config": c},
                       best_path)
            export(model, a.out, dtype="BF16", ranks_path=a.ranks)
            tag = " -> exported %s" % a.out
        if probe is not None:
            tag += " probe %s" % probe(model)
        log("CKPT step %d tokens %.2fM (%.2f epochs) val_loss %.4f (best %.4f)%s%s"
            % (step, tokens / 1e6, tokens / len(train), vl, best, tag, " FINAL" if final else ""))

    auto_threads, trial = a.threads == 0, None
    torch.set_num_threads(a.threads or 2)
    model.train()
    while (step < a.steps) if a.steps else time.time() < stop_at:
        frac = schedule_frac()
        if step < a.warmup:
            lr = a.lr * (step + 1) / a.warmup
        else:
            lr = a.min_lr + 0.5 * (a.lr - a.min_lr) * (1 + math.cos(math.pi * min(1.0, frac)))
        for g in opt.param_groups:
            g["lr"] = lr
        got = next_batch(gen, step)
        x, y = got[:2]
        # a third item weighs each target's loss (the mean is then over the weights)
        w = got[2] if len(got) > 2 else torch.ones(y.shape)
        opt.zero_grad(set_to_none=True)
        loss = 0.0
        for xs, ys, ws in zip(x.chunk(a.accum), y.chunk(a.accum), w.chunk(a.accum)):  # micro-batches, same gradient
            ce = F.cross_entropy(model(xs).flatten(0, 1), ys.flatten(), reduction="none")
            part = (ce * ws.flatten()).sum() / w.sum()
            part.backward()
            loss = loss + part.detach()
        gn = torch.nn.utils.clip_grad_norm_(model.parameters(), a.clip)
        opt.step()
        step += 1
        tokens += x.numel()
        tok_log += x.numel()
        ema = loss.item() if ema is None else 0.98 * ema + 0.02 * loss.item()
        if step % a.log_every == 0:
            now = time.time()
            rate = tok_log / (now - t_log)
            lams = model.lambdas()
            log("step %d loss %.4f (ema %.4f) lr %.2e gnorm %.2f %.0f tok/s (%d threads) "
                "frac %.3f lambda %s" % (step, loss.item(), ema, lr, gn, rate,
                                         torch.get_num_threads(), frac, lams))
            if auto_threads:
                # the machine is shared: under contention 1 thread can beat 2 (a descheduled
                # OpenMP worker stalls the other), so try the other count now and then
                if trial is not None:
                    if rate < trial:          # the trial was worse: switch back
                        torch.set_num_threads(3 - torch.get_num_threads())
                    trial = None
                elif (step // a.log_every) % 6 == 0:
                    trial = rate
                    torch.set_num_threads(3 - torch.get_num_threads())
            t_log, tok_log = time.time(), 0
        if time.time() - last_ckpt > 60 * a.ckpt_minutes:
            checkpoint()
            last_ckpt = time.time()
            t_log, tok_log = time.time(), 0
    checkpoint(final=True)
    log("DONE: %s (best val_loss %.4f nats/token)" % (a.out, best))
    return 0


def parse_args(argv=None):
    """The options (see the module doc) -> argparse namespace; tools/replicate.py uses it too."""
    ap = cli.parser(__doc__, ["/usr/bin/python3 tools/train.py verify --ranks /tmp/train/kjv.tiktoken --size tiny",
                              "/usr/bin/python3 tools/train.py train --ranks /tmp/train/kjv.tiktoken --size tiny "
                              "--minutes 10 --out /tmp/train/tiny.safetensors"], full=True)
    ap.add_argument("cmd", choices=["verify", "bench", "train"], help="what to do (see above)")
    ap.add_argument("--ranks", default="/tmp/train/kjv.tiktoken", help="tiktoken rank file (train_tokenizer.py)")
    ap.add_argument("--corpus", default=None, help="saved `bible -f Gen1:1-Rev22:21` output (default: run it)")
    ap.add_argument("--size", default="base",
                    help="size preset(s), comma-separated (bench), among " + ", ".join(SIZES))
    ap.add_argument("--attention", default="dint", choices=FAMILIES, help="the attention family")
    ap.add_argument("--steps", type=int, default=0,
                    help="train: stop after this many steps, the LR schedule running over them; 0 = at --deadline / --minutes")
    ap.add_argument("--dim", type=int, help="model width, a multiple of 2 x heads (default: the size's)")
    ap.add_argument("--layers", type=int, help="layers, 1 or more (default: the size's)")
    ap.add_argument("--heads", type=int, help="differential heads, 1 or more (standard: twice) (default: the size's)")
    ap.add_argument("--hidden", type=int, help="FFN width, 1 or more (default: the size's)")
    ap.add_argument("--ctx", type=int, default=256, help="training context and max_seq_len, 2 or more")
    ap.add_argument("--threads", type=int, default=2,
                    help="torch threads, 1 or more; train: 0 = switch between 1 and 2 by measured speed")
    ap.add_argument("--batch", type=int, default=16, help="rows a batch, 1 or more")
    ap.add_argument("--accum", type=int, default=1,
                    help="run each batch as this many micro-batches (less memory, same gradient)")
    ap.add_argument("--lr", type=float, default=2e-3, help="peak learning rate (AdamW), above 0")
    ap.add_argument("--min-lr", type=float, default=1e-4, help="the cosine decay's final learning rate, 0 or more")
    ap.add_argument("--wd", type=float, default=0.1, help="AdamW weight decay, 0 or more")
    ap.add_argument("--warmup", type=int, default=100, help="linear warm-up steps, 0 or more")
    ap.add_argument("--clip", type=float, default=1.0, help="gradient norm clip, above 0")
    ap.add_argument("--deadline", default=None, help="train: HH:MM UTC at which training stops and exports")
    ap.add_argument("--minutes", type=float, default=None, help="train: stop this many minutes from the start")
    ap.add_argument("--reserve", type=float, default=90.0,
                    help="seconds kept before the deadline for the final validation + export")
    ap.add_argument("--ckpt-minutes", type=float, default=5.0, help="checkpoint + validation + export period")
    ap.add_argument("--log-every", type=int, default=10, help="steps between log lines, 1 or more")
    ap.add_argument("--out", default=os.path.join(ROOT, "models", "dint-kjv.safetensors"),
                    help="the exported model (default: models/dint-kjv.safetensors)")
    ap.add_argument("--workdir", default="/tmp/train", help="checkpoints (ckpt.pt, best.pt)")
    ap.add_argument("--seed", type=int, default=0, help="train: seed of the initial weights and the batches, 0 or more")
    ap.add_argument("--export-last", action="store_true",
                    help="train: export the final weights too, not only the best validation loss's")
    ap.add_argument("--resume", action="store_true", help="train: continue from WORKDIR/ckpt.pt")
    ap.add_argument("--init", default=None, help="train: start from this checkpoint's weights (best.pt or "
                    "ckpt.pt of a run of the same config), with a new optimizer and schedule")
    ap.add_argument("--bench-steps", type=int, default=4, help="bench: timed steps a size, 1 or more")
    ap.add_argument("--verify-len", type=int, default=64, help="verify: tokens compared, 1 to --ctx")
    a = ap.parse_args(argv)
    if a.cmd == "train" and not (a.deadline or a.minutes or a.steps):
        ap.error("train needs --deadline HH:MM (UTC), --minutes M or --steps N")
    return a


def main(argv=None):
    a = parse_args(argv)
    return {"verify": cmd_verify, "bench": cmd_bench, "train": cmd_train}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
