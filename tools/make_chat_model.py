#!/usr/bin/python3
"""Write the chat test models of tests/generate.sh (examples/generate --chat):

    /usr/bin/python3 tools/make_chat_model.py [OUT_DIR]     (default tests/fixtures)

    chat_think.safetensors      a ChatML-like template (system, user, assistant roles; stop string
                                <|im_end|>, which is not an EOS id); the reply greedy decoding gives
                                to any conversation is "<think>hm</think> OK\u00e9" (the model opens the
                                reasoning itself)
    chat_think_r1.safetensors   the same model, but the generation prompt ends with "<think>"
                                (DeepSeek-R1 style): the reply is "hm</think> OK\u00e9"
    chat_think_eos.safetensors  the same as chat_think, but <|im_end|> is no stop string: it is
                                an EOS id of the tokenizer's "eos_ids" (the reply ends there too)

The model is built, not trained: its attention and FFN write nothing (wo and w_down are zero), so
the logits depend only on the current token, and the output matrix maps each token of the reply
to the next one (a chain): after the generation prompt's last token, greedy decoding spells the
reply, one byte or special token at a time ("\u00e9" is two byte tokens, so a character comes in
two pieces). Any other token leads to <|endoftext|> (the EOS id). The tokenizer has the 256 byte
tokens, no merges, and the special tokens <|endoftext|> (BOS and EOS), <|im_start|>, <|im_end|>,
<think>, </think>.
"""

import base64
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli              # noqa: E402
import make_model       # noqa: E402
import safetensors_io   # noqa: E402

SPECIAL = {"<|endoftext|>": 256, "<|im_start|>": 257, "<|im_end|>": 258, "<think>": 259, "</think>": 260}
V, D = 264, 16
# each token of the chain -> the next: "\n" (the generation prompt's last byte) -> <think> -> h -> m
# -> </think> -> " " -> O -> K -> 0xC3 -> 0xA9 (e acute) -> <|im_end|>
CHAIN = [10, 259, ord("h"), ord("m"), 260, ord(" "), ord("O"), ord("K"), 0xC3, 0xA9, 258]
ROLES = {r: ["<|im_start|>%s\n" % r, "<|im_end|>\n"] for r in ("system", "user", "assistant")}


def tensors():
    cfg = {"dim": D, "n_layers": 1, "vocab_size": V, "hidden_dim": 8, "max_seq_len": 128, "n_heads": 1,
           "head_dim": 4, "attention": "standard"}
    t = make_model.make_tensors(cfg, seed=3)
    emb = np.zeros((V, D), np.float32)
    emb[:, 0] = 1.0                      # dimension 0: every token off the chain
    out = np.zeros((V, D), np.float32)
    out[SPECIAL["<|endoftext|>"], 0] = 4.0
    for k, tok in enumerate(CHAIN[:-1]):
        emb[tok, :] = 0.0
        emb[tok, k + 1] = 1.0            # RMSNorm makes it 4 (sqrt(D)); the next token's logit is 16
        out[CHAIN[k + 1], k + 1] = 4.0
    t["tok_embeddings.weight"] = emb
    t["output.weight"] = out
    t["norm.weight"] = np.ones(D, np.float32)
    for name in t:
        if name.endswith("attn.wo") or name.endswith("ffn.w_down"):
            t[name] = np.zeros_like(t[name])
    return cfg, t


def ranks():
    lines = [base64.b64encode(bytes([i])).decode() + " %d" % i for i in range(256)]
    return ("\n".join(lines) + "\n").encode("ascii")


def write(path, cfg, t, chat, eos_ids=None):
    st = {k: ("F32", v) for k, v in t.items()}
    st["tokenizer.ranks"] = ("U8", np.frombuffer(ranks(), dtype=np.uint8))
    meta = make_model._metadata(cfg)
    tok = {"type": "tiktoken", "pattern": "cl100k", "special_tokens": SPECIAL, "bos_id": 256, "eos_id": 256}
    if eos_ids:
        tok["eos_ids"] = eos_ids
    meta["tokenizer"] = json.dumps(tok)
    meta["chat"] = json.dumps(chat)
    safetensors_io.write(path, st, meta)


def main():
    ap = cli.parser(__doc__, ["/usr/bin/python3 tools/make_chat_model.py /tmp/chat && "
                              "examples/generate /tmp/chat/chat_think.safetensors --chat"], full=True)
    ap.add_argument("out_dir", nargs="?", metavar="OUT_DIR",
                    default=os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures"),
                    help="the folder to write the three models to (default: tests/fixtures)")
    out_dir = ap.parse_args().out_dir
    cfg, t = tensors()
    write(os.path.join(out_dir, "chat_think.safetensors"), cfg, t,
          {"roles": ROLES, "generation_prompt": "<|im_start|>assistant\n", "stop": ["<|im_end|>"]})
    write(os.path.join(out_dir, "chat_think_r1.safetensors"), cfg, t,
          {"roles": ROLES, "generation_prompt": "<|im_start|>assistant\n<think>", "stop": ["<|im_end|>"]})
    write(os.path.join(out_dir, "chat_think_eos.safetensors"), cfg, t,
          {"roles": ROLES, "generation_prompt": "<|im_start|>assistant\n"}, eos_ids=[SPECIAL["<|im_end|>"]])
    print("make_chat_model: chat_think.safetensors, chat_think_r1.safetensors, chat_think_eos.safetensors in %s"
          % out_dir)


if __name__ == "__main__":
    main()
