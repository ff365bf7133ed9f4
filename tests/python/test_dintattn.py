#!/usr/bin/python3
"""python/dintattn.py against numbers it did not make: the fixtures' float64 reference logits
(tests/fixtures/NAME.logits, written by tools/make_fixtures.py from tools/reference.py), the
reference's attention matrices and config (tools/reference.py, imported), and the outputs of
examples/tokenize and examples/generate on the same inputs.

    make check-python        (builds the library and the two examples first)

or, with them built: /usr/bin/python3 tests/python/test_dintattn.py. The environment may name the
library (DINTATTN_LIB) and the examples' directory (DINTATTN_BUILD, default build/).
stdlib unittest and numpy only.
"""

import ctypes
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path[:0] = [os.path.join(ROOT, "python"), os.path.join(ROOT, "tools")]
import dintattn  # noqa: E402
import reference  # noqa: E402  (tools/reference.py: the float64 numpy reference)

BUILD = os.path.join(ROOT, os.environ.get("DINTATTN_BUILD", "build"))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
SHIPPED = os.path.join(ROOT, "models", "dint-kjv.safetensors")
TOL_REFERENCE = 5e-6  # tests/test_engine.c's TOL_REFERENCE, in test_util.h's rel_error


def read_manifest():
    """tests/fixtures/manifest.txt: "NAME IDS" per line (the ids the .logits were computed on)."""
    with open(os.path.join(FIXTURES, "manifest.txt")) as f:
        return [(name, [int(i) for i in ids.split(",")]) for name, ids in (line.split() for line in f if line.strip())]


FIXTURE_LIST = read_manifest()


def fixture(name):
    return os.path.join(FIXTURES, name + ".safetensors")


def reference_logits(name, n, vocab):
    """NAME.logits: float32 [n, vocab] from the float64 reference."""
    ref = np.fromfile(os.path.join(FIXTURES, name + ".logits"), dtype="<f4")
    assert ref.size == n * vocab, "%s.logits holds %d floats, not %d x %d" % (name, ref.size, n, vocab)
    return ref.reshape(n, vocab)


def rel_error(got, ref):
    """max |got - ref| / max(1, max |ref|), as tests/test_util.h's rel_error (NaN fails)."""
    got, ref = np.asarray(got, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    d = np.abs(got - ref).max()
    return np.inf if np.isnan(d) else d / max(1.0, np.abs(ref).max())


def log_softmax(rows):
    rows = np.asarray(rows, dtype=np.float64)
    m = rows.max(axis=-1, keepdims=True)
    return rows - m - np.log(np.exp(rows - m).sum(axis=-1, keepdims=True))


def token_bytes(tok, token):
    """A token's bytes; none for an id of the model's vocabulary that the tokenizer lacks."""
    try:
        return tok.token_bytes(token)
    except dintattn.DintattnError:
        return b""


def run(args, **kw):
    env = dict(os.environ)
    env.pop("DINTATTN_KERNELS", None)  # the examples read it; the bindings do not
    return subprocess.run(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True, **kw)


class ReferenceLogits(unittest.TestCase):
    """Every fixture of tests/fixtures/manifest.txt, as test_engine runs them in C."""

    def test_every_fixture_matches_reference_in_prefill_decode_and_chunks(self):
        for name, ids in FIXTURE_LIST:
            with self.subTest(fixture=name):
                model = dintattn.Model(fixture(name))
                ref = reference_logits(name, len(ids), model.vocab_size)
                sess = dintattn.Session(model)
                one = sess.prefill(ids, all_logits=True)
                self.assertEqual(one.shape, ref.shape)
                self.assertEqual(one.dtype, np.float32)
                sess.reset()
                decoded = np.stack([sess.decode(t) for t in ids])
                sess.reset()
                chunks = np.concatenate([sess.prefill(ids[i:i + 3], all_logits=True) for i in range(0, len(ids), 3)])
                self.assertEqual(sess.pos, len(ids))
                small_batch = dintattn.Session(model, n_batch=4).prefill(ids, all_logits=True)
                for mode, got in (("prefill", one), ("decode", decoded), ("chunks of 3", chunks),
                                  ("n_batch 4", small_batch)):
                    e = rel_error(got, ref)
                    self.assertLessEqual(e, TOL_REFERENCE, "%s %s: relative error %.3g" % (name, mode, e))
                # the last token's logits alone are the last row
                sess.reset()
                self.assertLessEqual(rel_error(sess.prefill(ids), ref[-1]), TOL_REFERENCE)

    def test_kv_cache_types_match_reference(self):
        """Session(kv="bf16" / "q8") against the reference rounding keys and values the same way
        (NAME.kvbf16.logits, .kvq8.logits; test_engine's TOL_KV), and the cache's bytes."""
        with open(os.path.join(FIXTURES, "converted.txt")) as f:
            conv = [(n, [int(i) for i in ids.split(",")]) for n, ids in (line.split() for line in f if line.strip())]
        self.assertGreaterEqual(len(conv), 4)
        for name, ids in conv:
            model = dintattn.Model(fixture(name))
            f32 = dintattn.Session(model, n_ctx=len(ids))
            for kv, elem in (("bf16", 2), ("q8", 1)):
                with self.subTest(fixture=name, kv=kv):
                    ref = np.fromfile(os.path.join(FIXTURES, "%s.kv%s.logits" % (name, kv)), dtype="<f4")
                    sess = dintattn.Session(model, precision="exact", kv=kv, n_ctx=len(ids))
                    self.assertEqual(sess.kv, kv)
                    got = sess.prefill(ids, all_logits=True)
                    self.assertLessEqual(rel_error(got, ref.reshape(got.shape)), 1e-4)
                    self.assertLess(sess.kv_bytes(100), f32.kv_bytes(100) * (elem + 1) / 4)
        with self.assertRaises(dintattn.DintattnError):
            dintattn.Session(model, kv="q4")

    def test_sessions_on_python_threads_match_serial(self):
        """One model, a session per Python thread (calls release the GIL): the logits of serial runs."""
        jobs = FIXTURE_LIST[:4]
        models = [dintattn.Model(fixture(name)) for name, _ in jobs]
        serial = [dintattn.Session(m).prefill(ids, all_logits=True) for m, (_, ids) in zip(models, jobs)]
        got = [None] * (2 * len(jobs))

        def work(k):
            m, (_, ids) = models[k % len(jobs)], jobs[k % len(jobs)]
            sess = dintattn.Session(m, n_threads=2)
            got[k] = np.stack([sess.decode(t) for t in ids]) if k >= len(jobs) else sess.prefill(ids, all_logits=True)

        threads = [threading.Thread(target=work, args=(k,)) for k in range(len(got))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for k, logits in enumerate(got):
            self.assertLessEqual(rel_error(logits, serial[k % len(jobs)]), 1e-5, jobs[k % len(jobs)][0])
            if k < len(jobs):
                self.assertTrue(np.array_equal(logits, serial[k]))  # the same calls: the same bits

    def test_token_ids_of_any_integer_type(self):
        name, ids = FIXTURE_LIST[0]
        model = dintattn.Model(fixture(name))
        ref = reference_logits(name, len(ids), model.vocab_size)
        for form in (ids, tuple(ids), np.array(ids, dtype=np.int64), np.array(ids, dtype=np.uint16),
                     np.array(ids, dtype=np.int32)[::-1][::-1], range(0)):
            sess = dintattn.Session(model)
            if len(form) == 0:
                self.assertRaises(dintattn.DintattnError, sess.prefill, form)
                continue
            self.assertLessEqual(rel_error(sess.prefill(form, all_logits=True), ref), TOL_REFERENCE)
        self.assertRaises(TypeError, dintattn.Session(model).prefill, [1.0, 2.0])
        self.assertRaises(ValueError, dintattn.Session(model).prefill, [[1, 2], [3, 4]])

    def test_logprobs_are_log_softmax_of_reference(self):
        """Session.logprobs against log-softmax in float64 (numpy, here) of the reference logits, in
        one call and after a prefilled prefix; logprob_of likewise (test_engine's tolerance)."""
        for name, ids in FIXTURE_LIST:
            with self.subTest(fixture=name):
                model = dintattn.Model(fixture(name))
                ref = reference_logits(name, len(ids), model.vocab_size)
                want = log_softmax(ref)[np.arange(len(ids) - 1), ids[1:]]
                sess = dintattn.Session(model, n_batch=3)
                got = sess.logprobs(ids)
                self.assertEqual((got.shape, got.dtype), ((len(ids) - 1,), np.float32))
                np.testing.assert_array_less(np.abs(got - want), 1e-4 * (1 + np.abs(want)))
                split = len(ids) // 3
                sess.reset()
                sess.prefill(ids[:split])
                tail = sess.logprobs(ids[split:])
                np.testing.assert_array_less(np.abs(tail - want[split:]), 1e-4 * (1 + np.abs(want[split:])))
                self.assertEqual(sess.pos, len(ids))
                self.assertAlmostEqual(dintattn.logprob_of(ref[0], ids[1]), log_softmax(ref[0])[ids[1]], places=9)
                self.assertTrue(np.isnan(dintattn.logprob_of(ref[0], model.vocab_size)))
        self.assertEqual(sess.logprobs(ids[:1]).shape, (0,))

    def test_map_copy_computes_what_the_mapped_file_does(self):
        """Model(map="copy") reads the weights from its own copy of the file (owned_bytes grows by
        the file's size) and computes the mapped file's logits bit for bit; both match the reference."""
        name, ids = FIXTURE_LIST[0]
        path = fixture(name)
        mapped, copied = dintattn.Model(path, map="file"), dintattn.Model(path, map="copy")
        self.assertGreaterEqual(copied.owned_bytes, mapped.owned_bytes + os.path.getsize(path))
        a = dintattn.Session(mapped).prefill(ids, all_logits=True)
        b = dintattn.Session(copied).prefill(ids, all_logits=True)
        np.testing.assert_array_equal(a, b)
        self.assertLessEqual(rel_error(b, reference_logits(name, len(ids), copied.vocab_size)), TOL_REFERENCE)

    def test_copy_from_continues_as_the_original(self):
        """Session.copy_from: a prefix copied into a larger, used session continues there with the
        original's logits bit for bit, and both match the reference; a session of another cache type
        or too small a context raises."""
        for name, ids in FIXTURE_LIST:
            with self.subTest(fixture=name):
                model = dintattn.Model(fixture(name))
                ref = reference_logits(name, len(ids), model.vocab_size)
                split = len(ids) // 2
                src, dst = dintattn.Session(model), dintattn.Session(model, n_ctx=len(ids) + 3)
                dst.prefill(ids[::-1])
                src.prefill(ids[:split])
                dst.copy_from(src)
                self.assertEqual(dst.pos, split)
                a, b = src.prefill(ids[split:], all_logits=True), dst.prefill(ids[split:], all_logits=True)
                np.testing.assert_array_equal(a, b)
                self.assertLessEqual(rel_error(b, ref[split:]), TOL_REFERENCE)
                self.assertRaises(dintattn.DintattnError, dintattn.Session(model, kv="bf16").copy_from, src)
                self.assertRaises(dintattn.DintattnError, dintattn.Session(model, n_ctx=2).copy_from, src)

    def test_config_matches_reference_loader(self):
        """Model.config (the C struct read through ctypes) against tools/reference.py's resolved config:
        catches a binding whose struct layout drifted from the header's."""
        for name, _ in FIXTURE_LIST:
            with self.subTest(fixture=name):
                cfg = dintattn.Model(fixture(name)).config
                want, _ = reference.load(fixture(name))
                for key in dintattn._SIZES + ("attention", "head_norm_type", "head_scale", "rope", "ffn_act",
                                              "rope_theta", "norm_eps", "head_norm_eps", "head_norm", "tie_embeddings",
                                              "shared_k", "ffn_bias"):
                    self.assertEqual(cfg[key], want[key], key)
                self.assertEqual(cfg.n_layers, want["n_layers"])
                if want["attention"] == "dint":
                    self.assertEqual(cfg.integral, want["integral"])
                if want["attention"] != "standard":
                    self.assertEqual(cfg.lambda_mode, want["lambda_mode"])
                if want["rope"] != "none":
                    self.assertEqual(cfg.rope_dim, want["rope_dim"])
                rs = want["rope_scaling_values"]
                if rs is None:
                    self.assertIsNone(cfg.rope_scaling)
                else:
                    self.assertEqual(sorted(cfg.rope_scaling), sorted(k for k in rs if rs["type"] == "yarn" or
                                                                      k != "attention_factor"))
                    for key, value in cfg.rope_scaling.items():
                        self.assertAlmostEqual(value, rs[key], places=12, msg=key) if key != "type" else \
                            self.assertEqual(value, rs[key])


class Attention(unittest.TestCase):
    """The attention hook's rows against the reference's final W matrices (forward(return_attn=True))."""

    def capture(self, sess, ids, decode, **kw):
        with sess.capture_attention(**kw) as cap:
            if decode:
                for t in ids:
                    sess.decode(t)
            else:
                sess.prefill(ids)
        return cap

    def test_rows_match_reference_and_sum_to_one(self):
        dint_models = 0
        for name, ids in FIXTURE_LIST:
            with self.subTest(fixture=name):
                model = dintattn.Model(fixture(name))
                cfg = model.config
                _, W = reference.forward(fixture(name), ids, return_attn=True)  # W[l]: [H, N, N] float64
                # prefill on the calling thread; decode on a pool of 2 (the hook from worker threads)
                for decode, threads in ((False, 1), (True, 2)):
                    cap = self.capture(dintattn.Session(model, n_threads=threads), ids, decode)
                    self.assertEqual(len(cap.rows), cfg.n_layers * cfg.n_heads * len(ids))
                    worst, worst_sum = 0.0, 0.0
                    for (layer, head, pos), row in cap.rows.items():
                        self.assertEqual(row.shape, (pos + 1,))
                        worst = max(worst, np.abs(row - W[layer][head, pos, :pos + 1]).max())
                        worst_sum = max(worst_sum, abs(row.astype(np.float64).sum() - 1))
                    # 2e-5: the float32 engine is 4.7e-6 at worst from the float64 reference
                    self.assertLessEqual(worst, 2e-5, "%s: a row is %.3g from the reference's" % (name, worst))
                    if cfg.attention != "diff":  # DINT (gamma = lambda) and standard rows sum to 1: docs/format.md section 1
                        self.assertLessEqual(worst_sum, 1e-5, "%s: a row sums to 1 %+.3g" % (name, worst_sum))
                dint_models += cfg.attention == "dint"
                m = cap.matrix(0, 0)
                np.testing.assert_allclose(m, W[0][0], atol=2e-5)
        self.assertGreaterEqual(dint_models, 5)

    def test_terms_match_reference(self):
        """capture_attention(terms=True): A1, A2, DINT's I and lambda of every row against the
        reference's (forward(return_terms=True)), on a fixture of each family, with positions."""
        names = ["dint_softmax_f32", "diff_3layer_depth_f32", "dint_mean_f16", "conv_standard_gqa_dv12_f32"]
        ids_of = dict(FIXTURE_LIST)
        with open(os.path.join(FIXTURES, "converted.txt")) as f:
            ids_of.update((n, [int(i) for i in ids.split(",")]) for n, ids in (line.split() for line in f if line.strip()))
        for name in names:
            with self.subTest(fixture=name):
                ids = ids_of[name]
                _, terms = reference.forward(fixture(name), ids, return_terms=True)
                sess = dintattn.Session(dintattn.Model(fixture(name)))
                with sess.capture_attention(terms=True, positions=range(2, len(ids))) as cap:
                    sess.prefill(ids)
                self.assertEqual({p for (_, _, p) in cap.terms}, set(range(2, len(ids))))
                for (layer, head, pos), got in cap.terms.items():
                    want = terms[layer]
                    for key in ("A1", "A2", "I"):
                        if want[key] is None:
                            self.assertIsNone(got[key], key)
                        else:
                            np.testing.assert_allclose(got[key], want[key][head, pos, :pos + 1], atol=2e-5, err_msg=key)
                    lam = want["lambda"]
                    lam = float(lam[head, pos, 0]) if np.ndim(lam) else float(lam)
                    self.assertAlmostEqual(got["lambda"], lam, places=5)
                    stats = dintattn.attention_stats(cap.rows[(layer, head, pos)], [(0, 1)])
                    w = cap.rows[(layer, head, pos)].astype(np.float64)
                    p = np.abs(w) / np.abs(w).sum()
                    self.assertAlmostEqual(stats["sum"], w.sum(), places=6)
                    self.assertAlmostEqual(stats["span_mass"], w[0], places=6)
                    self.assertAlmostEqual(stats["neg_sum"], w[w < 0].sum(), places=6)
                    self.assertAlmostEqual(stats["entropy"], -(p[p > 0] * np.log(p[p > 0])).sum(), places=5)

    def test_capture_selects_layers_and_heads_and_ends_with_the_block(self):
        name, ids = next((n, i) for n, i in FIXTURE_LIST if n.startswith("dint_"))
        model = dintattn.Model(fixture(name))
        sess = dintattn.Session(model)
        cap = self.capture(sess, ids, False, layers=[1], heads=[0])
        self.assertEqual(sorted(cap.rows), [(1, 0, p) for p in range(len(ids))])
        sess.decode(ids[0])  # after the block: nothing more is captured
        self.assertEqual(len(cap.rows), len(ids))
        with sess.capture_attention():
            self.assertRaises(ValueError, sess.capture_attention().__enter__)


class TokenizerMatchesExamples(unittest.TestCase):
    TEXTS = ["In the beginning God created the heaven and the earth.", "naïve café ☃ 世界 😀",
             "  spaces\tand\nnewlines  \n\n", "<|endoftext|>And God said", "12345 3.14159, 1:1-22:21", ""]

    @classmethod
    def setUpClass(cls):
        cls.model = dintattn.Model(SHIPPED)
        cls.tok = cls.model.tokenizer()

    def tokenize(self, *args):
        out = run([os.path.join(BUILD, "tokenize")] + list(args)).stdout
        return out

    def test_encode_equals_examples_tokenize(self):
        for text in self.TEXTS:
            want = self.tokenize(SHIPPED, text).decode().strip()
            self.assertEqual(",".join(map(str, self.tok.encode(text))), want, text)

    def test_decode_equals_examples_tokenize_and_round_trips(self):
        for text in self.TEXTS[:-1]:
            ids = self.tok.encode(text)
            self.assertEqual(self.tok.decode(ids), text)
            self.assertEqual(self.tok.decode_bytes(ids), self.tokenize(SHIPPED, "--decode", ",".join(map(str, ids))))
            self.assertEqual(b"".join(self.tok.token_bytes(i) for i in ids), text.encode())

    def test_special_tokens_bos_eos_and_invalid_utf8(self):
        tok = self.tok
        self.assertEqual((tok.bos, tok.eos), (4095, 4095))  # the shipped model's <|endoftext|> is BOS and EOS
        self.assertTrue(tok.is_eos(tok.eos) and tok.is_special(tok.eos) and not tok.is_eos(0))
        self.assertEqual(tok.encode("<|endoftext|>"), [tok.eos])
        self.assertNotEqual(tok.encode("<|endoftext|>", allow_special=False), [tok.eos])
        raw = b"ok \xff\xfe \xe2\x98"  # not UTF-8: encoded as bytes, decoded back as they were
        ids = tok.encode(raw)
        self.assertEqual(tok.decode_bytes(ids), raw)
        self.assertEqual(tok.decode(ids), raw.decode("utf-8", "replace"))
        self.assertIn("\ufffd", tok.decode(ids))

    def test_tokenizer_from_files(self):
        self.assertEqual(dintattn.Tokenizer(SHIPPED).encode(self.TEXTS[1]), self.tok.encode(self.TEXTS[1]))
        ranks = os.path.join(FIXTURES, "toy.tiktoken")
        toy = dintattn.Tokenizer(ranks)
        for text in self.TEXTS[:3]:
            self.assertEqual(",".join(map(str, toy.encode(text))), self.tokenize("--ranks", ranks, text).decode().strip())
        self.assertIsNone(toy.bos)
        self.assertEqual((toy.source, dintattn.Tokenizer(SHIPPED).source, self.tok.source),
                         ("tiktoken rank file", "model file", "model file"))

    def test_encode_prompt_and_has_token_are_the_librarys(self):
        # tok_model.safetensors: toy.tiktoken ("the" is 258, ranks up to 285) with <|bos|> 301 as BOS, in
        # a model of 310 rows: ids 286..299 and 302..309 are no tokens
        tok = dintattn.Tokenizer(os.path.join(FIXTURES, "tok_model.safetensors"))
        self.assertEqual(tok.encode_prompt("the"), [301, 258])
        self.assertEqual(tok.encode_prompt("<|bos|>the"), [301, 258])
        self.assertEqual(tok.encode_prompt(""), [301])
        self.assertEqual(tok.encode_prompt("<|bos|>", allow_special=False)[0], 301)
        self.assertEqual(len(tok.encode_prompt("<|bos|>", allow_special=False)),
                         1 + len(tok.encode("<|bos|>", allow_special=False)))
        self.assertEqual(dintattn.Tokenizer(os.path.join(FIXTURES, "toy.tiktoken")).encode_prompt("the"), [258])
        self.assertEqual([i for i in range(310) if not tok.has_token(i)], list(range(286, 300)) + list(range(302, 310)))
        self.assertFalse(tok.has_token(-1))


class Batches(unittest.TestCase):
    """dintattn.step and dintattn.generate_batch: sessions stepped together (dintattn_batch_step)."""

    def test_step_equals_each_session_alone_and_the_reference(self):
        # batched rows run other kernels than a lone session's (panels for the stacked tokens), so
        # they equal it within the engine's f32 rounding (1e-5 relative, as tests/test_batch.c),
        # and the float64 reference within TOL_REFERENCE
        for name, ids in FIXTURE_LIST[:6]:
            with self.subTest(fixture=name):
                model = dintattn.Model(fixture(name))
                ref = reference_logits(name, len(ids), model.vocab_size)
                a, b, c = (dintattn.Session(model, precision="exact") for _ in range(3))
                cut = max(1, len(ids) // 2)
                got = dintattn.step([(a, ids[:cut]), (b, ids), (c, ids[:2])], all_logits=True, max_tokens=3)
                self.assertEqual([s.pos for s in (a, b, c)], [cut, len(ids), 2])
                self.assertLessEqual(rel_error(got[1], ref), TOL_REFERENCE)
                self.assertLessEqual(rel_error(got[0], ref[:cut]), TOL_REFERENCE)
                alone = dintattn.Session(model, precision="exact").prefill(ids, all_logits=True)
                self.assertLessEqual(rel_error(got[1], alone), 1e-5)
                # then a decode each (the last-token form), joining c's chunk
                nxt = dintattn.step([(a, [ids[cut]]), (b, [ids[0]]), (c, ids[2:4])])
                self.assertEqual(nxt[0].shape, (model.vocab_size,))
                self.assertLessEqual(rel_error(nxt[0], ref[cut]), TOL_REFERENCE)

    def test_bad_batches_raise_the_librarys_message(self):
        model = dintattn.Model(SHIPPED)
        other = dintattn.Model(os.path.join(FIXTURES, "tok_model.safetensors"))
        a, b = dintattn.Session(model), dintattn.Session(other)
        with self.assertRaisesRegex(dintattn.DintattnError, "item 1's session is of another model"):
            dintattn.step([(a, [1, 2]), (b, [1])])
        with self.assertRaisesRegex(dintattn.DintattnError, "items 0 and 1 are one session"):
            dintattn.step([(a, [1]), (a, [2])])
        with self.assertRaisesRegex(dintattn.DintattnError, "item 0 has no tokens"):
            dintattn.step([(a, [])])
        self.assertEqual(a.pos, 0)  # nothing ran
        with self.assertRaises(TypeError):
            dintattn.step([("not a session", [1])])

    def test_generate_batch_equals_generate_per_prompt(self):
        model = dintattn.Model(SHIPPED)
        prompts = ["In the beginning", "And it came to pass", "And God said", "Blessed is the man"]
        got = dintattn.generate_batch(model, prompts, max_tokens=24, temperature=0)
        alone = ["".join(dintattn.Session(model).generate(p, max_tokens=24, temperature=0)) for p in prompts]
        self.assertEqual(got, alone)
        got = dintattn.generate_batch(model, prompts[:2], max_tokens=24, seed=11)
        alone = ["".join(dintattn.Session(model).generate(p, max_tokens=24, seed=11 + k)) for k, p in enumerate(prompts[:2])]
        self.assertEqual(got, alone)
        self.assertEqual(dintattn.generate_batch(model, []), [])

    def test_prepack_keeps_long_prompts_bit_for_bit(self):
        model = dintattn.Model(SHIPPED, weights="q8")
        sess = dintattn.Session(model, n_threads=2)
        ids = list(range(5, 45))
        before = sess.prefill(ids, all_logits=True)
        packed = model.prepack(sess)
        self.assertEqual(model.prepack(sess), 0)  # nothing more to pack
        sess.reset()
        after = sess.prefill(ids, all_logits=True)
        if packed:  # where the level runs Q8 on int8 panels
            self.assertEqual(sess.prefill_unit("q8"), "int8 panels")
        np.testing.assert_array_equal(before, after)


class ActivationStats(unittest.TestCase):
    """Session.act_stats against examples/activations --json (the numbers the C suites check against
    the float64 reference), and against numpy over the hidden states' own recomputation: the last
    layer's hidden state of the last token, normed and multiplied by the LM head, gives the logits."""

    def test_stats_equal_the_example_and_are_consistent(self):
        text = "And God said, Let there be light"
        model = dintattn.Model(SHIPPED)
        sess = dintattn.Session(model)
        sess.act_start(top_k=10)
        sess.prefill(model.tokenizer().encode_prompt(text))
        cli = json.loads(run([os.path.join(BUILD, "activations"), SHIPPED, "-p", text, "--json"]).stdout)
        for layer in cli["models"][0]["layers"]:
            for kind in dintattn.ACT_KINDS:
                got, want = sess.act_stats(layer["layer"], kind), layer[kind]
                self.assertEqual(got["count"], want["count"])
                for key in ("top1", "topk", "median", "ratio", "mean", "std", "kurtosis"):
                    self.assertAlmostEqual(got[key], want[key], delta=1e-6 * max(1.0, abs(want[key])), msg=(kind, key))
                np.testing.assert_allclose(got["top"], want["top"], rtol=1e-6)
                self.assertTrue(np.all(np.diff(got["top"]) <= 0))  # descending
                self.assertEqual(got["top1"], float(got["top"][0]))
        with self.assertRaisesRegex(ValueError, "kind must be one of"):
            sess.act_stats(0, "bogus")
        sess.act_stop()
        with self.assertRaisesRegex(dintattn.DintattnError, "not collecting"):
            sess.act_stats(0, "hidden")


class GenerateMatchesExample(unittest.TestCase):
    """Session.generate's text against examples/generate's stdout (the prompt, the text, a newline)."""

    def cli(self, model, prompt, n, *flags):
        out = run([os.path.join(BUILD, "generate"), model, "-p", prompt, "-n", str(n)] + list(flags)).stdout
        self.assertTrue(out.startswith(prompt.encode()) and out.endswith(b"\n"))
        return out[len(prompt.encode()):-1]

    def test_greedy_and_seeded_text_on_the_shipped_model(self):
        model = dintattn.Model(SHIPPED)
        for prompt in ("In the beginning", "And it came to pass"):
            sess = dintattn.Session(model)
            got = "".join(sess.generate(prompt, max_tokens=48, temperature=0))
            self.assertEqual(got, self.cli(SHIPPED, prompt, 48, "--temp", "0").decode())
            self.assertGreater(len(got), 48)
            sess.reset()  # the example's default sampling, with a seed
            got = "".join(sess.generate(prompt, max_tokens=48, seed=7))
            self.assertEqual(got, self.cli(SHIPPED, prompt, 48, "--seed", "7").decode())

    def test_stream_holds_back_characters_split_across_tokens(self):
        """A byte-level model sampled hot writes multi-byte characters a byte per token: the stream must
        join to the whole output's UTF-8 text (a piece per token decoded alone would not), as the
        example prints it."""
        path = os.path.join(FIXTURES, "tok_model.safetensors")
        model = dintattn.Model(path)
        tok = model.tokenizer()
        sess = dintattn.Session(model)
        flags = dict(temperature=2.0, top_k=0, top_p=1.0, min_p=0.0, repeat_penalty=1.0)
        valid_multibyte = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|\xe0[\xa0-\xbf][\x80-\xbf]|[\xe1-\xec\xee\xef][\x80-\xbf]{2}"
                                     rb"|\xed[\x80-\x9f][\x80-\xbf]|\xf0[\x90-\xbf][\x80-\xbf]{2}"
                                     rb"|[\xf1-\xf3][\x80-\xbf]{3}|\xf4[\x80-\x8f][\x80-\xbf]{2}")
        for seed in range(64):  # the first seed whose output splits a valid character between tokens
            sess.reset()
            sampler = dintattn.Sampler(model, seed=seed, **flags)
            ids = [tok.bos] + tok.encode("A")
            for t in ids:
                sampler.accept(t)
            pieces = [token_bytes(tok, t) for t in sess.generate_ids(ids, 14, sampler, tok)]
            whole, cuts = b"".join(pieces), set(np.cumsum([len(p) for p in pieces])[:-1].tolist())
            if any(any(m.start() < c < m.end() for c in cuts) for m in valid_multibyte.finditer(whole)):
                break
        else:
            self.fail("no seed in 64 gave a character split between tokens")
        sess.reset()
        stream = list(sess.generate("A", max_tokens=14, seed=seed, **flags))
        self.assertEqual("".join(stream), whole.decode("utf-8", "replace"))
        self.assertNotEqual("".join(p.decode("utf-8", "replace") for p in pieces), "".join(stream))
        cli = self.cli(path, "A", 14, "--seed", str(seed), "--temp", "2", "--top-k", "0", "--top-p", "1",
                       "--min-p", "0", "--repeat-penalty", "1")
        self.assertEqual(cli, whole)

    def test_stops_at_eos_and_context_end(self):
        model = dintattn.Model(SHIPPED)
        tok = model.tokenizer()
        sess, prompt = dintattn.Session(model, n_ctx=8), [tok.bos] + tok.encode("And God said")
        ids = list(sess.generate_ids(prompt, max_tokens=100))
        # as examples/generate: the token drawn when the context is full is given, not run
        self.assertEqual((len(ids), sess.pos), (8 - len(prompt) + 1, 8))
        self.assertEqual(sess.stop_reason, "context")
        sess.reset()
        self.assertEqual(len(list(sess.generate_ids(prompt, max_tokens=2))), 2)
        self.assertEqual(sess.stop_reason, "max_tokens")

        class Scripted:  # draws 5, 6, then EOS
            def __init__(self):
                self.drawn, self.accepted = [5, 6, tok.eos, 7], []

            def sample(self, logits):
                return self.drawn.pop(0)

            def accept(self, token):
                self.accepted.append(token)

        sess, sampler = dintattn.Session(model), Scripted()
        self.assertEqual(list(sess.generate_ids([tok.bos], 10, sampler, tok)), [5, 6])
        self.assertEqual((sampler.accepted, sess.pos), ([5, 6], 3))  # EOS neither yielded nor run
        self.assertEqual(sess.stop_reason, "eos")


class Errors(unittest.TestCase):
    def test_errors_raise_with_the_library_message(self):
        with self.assertRaises(dintattn.DintattnError) as e:
            dintattn.Model(os.path.join(FIXTURES, "no-such-model.safetensors"))
        self.assertEqual((e.exception.code, e.exception.result), (dintattn.ERR_IO, "ERR_IO"))
        self.assertIn("no-such-model.safetensors", e.exception.message)
        self.assertEqual(e.exception.name, "i/o error")
        with self.assertRaises(dintattn.DintattnError) as e:
            dintattn.Model(os.path.join(FIXTURES, "manifest.txt"))  # not a safetensors file
        self.assertEqual(e.exception.result, "ERR_HEADER")
        self.assertRegex(e.exception.message, r"^.*/manifest\.txt is not a safetensors file \(header length \d+ runs past "
                         r"the end of its \d+ bytes\): give a dintattn model file \(docs/format\.md section 2\)$")

        name, ids = FIXTURE_LIST[0]
        model = dintattn.Model(fixture(name))
        sess = dintattn.Session(model, n_ctx=len(ids))
        sess.prefill(ids[:2])
        for call, code, words in ((lambda: sess.prefill([0, model.vocab_size]), dintattn.ERR_ARG, "vocabulary"),
                                  (lambda: sess.decode(-1), dintattn.ERR_ARG, "vocabulary"),
                                  (lambda: sess.decode(2 ** 40), dintattn.ERR_ARG, "32 bits"),
                                  (lambda: sess.prefill(ids), dintattn.ERR_CONTEXT, "fit"),
                                  (lambda: sess.logprobs(ids), dintattn.ERR_CONTEXT, "fit")):
            with self.assertRaises(dintattn.DintattnError) as e:
                call()
            self.assertEqual(e.exception.code, code, e.exception.message)
            self.assertIn(words, e.exception.message)
            self.assertEqual(sess.pos, 2)  # nothing changed
        with self.assertRaises(dintattn.DintattnError) as e:
            sess.prefill_unit("q5")
        self.assertIn('"q5"', e.exception.message)
        for kw in (dict(kernels="sse9"), dict(precision="half"), dict(n_ctx=model.config.max_seq_len + 1)):
            self.assertRaises(dintattn.DintattnError, dintattn.Session, model, **kw)
        self.assertRaises(dintattn.DintattnError, dintattn.Model, fixture(name), weights="q2")
        self.assertRaises(dintattn.DintattnError, dintattn.Model, fixture(name), map="mmap")
        self.assertRaises(dintattn.DintattnError, dintattn.Model, fixture(name), n_threads=-1)
        self.assertRaises(dintattn.DintattnError, dintattn.Sampler, model, temperature=-1, top_p=2)
        self.assertRaises(ValueError, model.close)  # sess is open
        sess.close()
        self.assertRaises(ValueError, sess.decode, 0)
        model.close()


class LayoutMatchesLibrary(unittest.TestCase):
    """python/dintattn.py's ctypes copies of the header's structs and enums against the library's
    own table (dintattn_abi_fields), checked at import; a changed copy must fail the check."""

    def table(self):
        n = ctypes.c_int()
        rows = dintattn._lib.dintattn_abi_fields(ctypes.byref(n))
        return [(rows[i].type.decode(), rows[i].field and rows[i].field.decode(), rows[i].offset, rows[i].size)
                for i in range(n.value)]

    def test_every_struct_of_the_table_is_mirrored_and_matches(self):
        dintattn._check_abi()  # what the import did
        structs = {t for t, f, _, _ in self.table() if f is None}
        self.assertEqual(structs, set(dintattn._MIRRORS))
        rows = {(t, f): (o, z) for t, f, o, z in self.table()}
        self.assertEqual(rows[("dintattn_error", "message")], (4, 512))
        self.assertEqual(rows[("dintattn_session_options", None)][1], 32)  # eight ints
        self.assertEqual(rows[("dintattn_result", "DINTATTN_ERR_NONFINITE")][0], 16)

    def check_fails(self, cname, cls, *words):
        with self.assertRaises(ImportError) as e:
            dintattn._check_abi(dict(dintattn._MIRRORS, **{cname: cls}))
        for w in words:
            self.assertIn(w, str(e.exception))

    def test_a_changed_struct_fails_naming_struct_and_field(self):
        fields = dintattn._SessionOptions._fields_
        # a field left out (the struct as it was before the dispatch options)
        short = type("_SessionOptions", (ctypes.Structure,), {"_fields_": [f for f in fields if f[0] != "bf16_dot"]})
        self.check_fails("dintattn_session_options", short, "dintattn_session_options: sizeof is 32 in the library, 28",
                         "dintattn_session_options.bf16_dot: missing from _SessionOptions")
        # a field of another type: the ones after it move
        wide = type("_SessionOptions", (ctypes.Structure,),
                    {"_fields_": [(n, ctypes.c_double if n == "kernels" else t) for n, t in fields]})
        self.check_fails("dintattn_session_options", wide, "dintattn_session_options.kernels: offset 12 size 4 in the "
                         "library, offset 16 size 8", "dintattn_session_options.precision")
        # two fields swapped: same size, the offsets differ
        swapped = type("_Error", (ctypes.Structure,), {"_fields_": [("message", ctypes.c_char * 512), ("code", ctypes.c_int)]})
        self.check_fails("dintattn_error", swapped, "dintattn_error.code: offset 0 size 4 in the library, offset 512")
        # a renamed field
        renamed = type("_ChatMessage", (ctypes.Structure,),
                       {"_fields_": [("role", ctypes.c_char_p), ("text", ctypes.c_char_p)]})
        self.check_fails("dintattn_chat_message", renamed, "dintattn_chat_message.content: missing from _ChatMessage",
                         "dintattn_chat_message.text: no such field in the library")

    def test_a_changed_enum_fails(self):
        results = dintattn.RESULTS[:3] + dintattn.RESULTS[4:]  # ERR_HEADER left out: the codes after it shift
        with self.assertRaises(ImportError) as e:
            dintattn._check_abi(enums=[("dintattn_result", "DINTATTN_", results)])
        self.assertIn("enum dintattn_result", str(e.exception))


class AsAResearcher(unittest.TestCase):
    def test_prefill_unit_names_what_a_prompt_runs_on(self):
        """Session.prefill_unit: at the portable level f32 products go to sgemm and int8 ones to the
        rows; precision exact takes Q8 to sgemm too."""
        name, _ = FIXTURE_LIST[0]
        with dintattn.Model(fixture(name)) as model:
            with dintattn.Session(model, kernels="portable") as auto, \
                    dintattn.Session(model, kernels="portable", precision="exact") as exact:
                self.assertEqual((auto.prefill_unit("f32"), auto.prefill_unit("q8")), ("sgemm", "rows"))
                self.assertEqual(exact.prefill_unit("q8"), "sgemm")

    def test_version_is_the_headers(self):
        """__version__ comes from the library (dintattn_version) and equals the header's DINTATTN_VERSION."""
        with open(os.path.join(ROOT, "dintattn.h")) as f:
            want = re.search(r'#define DINTATTN_VERSION "([^"]+)"', f.read()).group(1)
        self.assertEqual(dintattn.__version__, want)

    def test_fresh_interpreter_with_only_pythonpath(self):
        """A new python3 with nothing set but PYTHONPATH=python, in the repository: imports, finds
        build/libdintattn.so by itself, generates and scores as this process does (the score within
        rounding: without OPENBLAS_CORETYPE, OpenBLAS may run other GEMM kernels)."""
        env = {"PYTHONPATH": "python"}
        if os.path.realpath(dintattn.library_path) != os.path.realpath(os.path.join(ROOT, "build", "libdintattn.so")):
            env["DINTATTN_LIB"] = dintattn.library_path  # BUILD is not build/: say where it is
        script = ("import dintattn\n"
                  "m = dintattn.Model('models/dint-kjv.safetensors')\n"
                  "s = dintattn.Session(m)\n"
                  "print(''.join(s.generate('And God said', max_tokens=24, temperature=0)))\n"
                  "s.reset()\n"
                  "print(repr(float(s.logprobs([m.tokenizer().bos] + m.tokenizer().encode('And God said')).sum())))\n")
        out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, check=True, timeout=300).stdout.decode()
        model = dintattn.Model(SHIPPED)
        sess = dintattn.Session(model)
        text = "".join(sess.generate("And God said", max_tokens=24, temperature=0))
        sess.reset()
        tok = model.tokenizer()
        score = float(sess.logprobs([tok.bos] + tok.encode("And God said")).sum())
        got_text, got_score = out.rsplit("\n", 2)[:2]
        self.assertEqual(got_text, text)
        self.assertAlmostEqual(float(got_score), score, delta=1e-5 * abs(score))

    @unittest.skipUnless(shutil.which("pkg-config") and shutil.which("cc") and shutil.which("make"),
                         "needs make, cc and pkg-config")
    def test_make_install_then_pkg_config_and_import(self):
        """make install PREFIX=tmp: the installed module finds the installed library (no DINTATTN_LIB),
        and a C program builds with `cc $(pkg-config --cflags --libs dintattn)`."""
        with tempfile.TemporaryDirectory() as prefix:
            run(["make", "-s", "install", "PREFIX=" + prefix, "BUILD=" + os.path.relpath(BUILD, ROOT)])
            (module,) = glob.glob(os.path.join(prefix, "lib", "python3*", "*-packages", "dintattn.py"))
            env = {"PYTHONPATH": os.path.dirname(module)}
            out = subprocess.run([sys.executable, "-c", "import dintattn; print(dintattn.library_path)"], cwd=prefix,
                                 env=env, stdout=subprocess.PIPE, check=True).stdout.decode().strip()
            self.assertEqual(out, os.path.join(prefix, "lib", "libdintattn.so"))
            src = os.path.join(prefix, "main.c")
            with open(src, "w") as f:
                f.write('#include <dintattn.h>\n#include <stdio.h>\n'
                        'int main(int argc, char **argv) {\n'
                        '    dintattn_model *m; dintattn_error err;\n'
                        '    if (dintattn_model_load(argv[1], NULL, &m, &err)) return 1;\n'
                        '    printf("%s %d\\n", DINTATTN_VERSION, dintattn_model_config(m)->n_layers);\n'
                        '    dintattn_model_free(m);\n    return 0;\n}\n')
            pc_env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, "lib", "pkgconfig"))
            flags = subprocess.run(["pkg-config", "--cflags", "--libs", "dintattn"], env=pc_env, stdout=subprocess.PIPE,
                                   check=True).stdout.decode().split()
            subprocess.run(["cc", src, "-o", os.path.join(prefix, "main")] + flags, check=True)
            out = subprocess.run([os.path.join(prefix, "main"), SHIPPED], stdout=subprocess.PIPE, check=True,
                                 env=dict(os.environ, LD_LIBRARY_PATH=os.path.join(prefix, "lib"))).stdout.decode()
            with open(os.path.join(ROOT, "dintattn.h")) as f:
                version = re.search(r'#define DINTATTN_VERSION "(.*)"', f.read()).group(1)
            self.assertEqual(out, "%s 6\n" % version)  # the shipped model has 6 layers


if __name__ == "__main__":
    unittest.main(verbosity=2)
