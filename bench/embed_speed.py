"""Embedding throughput of the in-process MiniLM against named baselines, on ~250-token notes.

Run: .venv/bin/python bench/embed_speed.py [--notes 96] [--rounds 3] [--sweep]

Notes are real Org sections from ../shared/corpus/org/files cut to ~250 tokens (checked with
the model's tokenizer).  Every configuration embeds the same notes with batch 32; rounds are
interleaved (A B C, A B C, ...) because the second vCPU is intermittently slow, and the table
reports the median notes/s per configuration and its ratio to the numpy baseline.

Configurations:
- ``numpy-forward`` (baseline): plain numpy BERT forward pass, each batch of 32 padded to its
  longest note; numpy's BLAS threads as configured (OPENBLAS_* left untouched).  Timed on the
  first 32 notes of each workload only (it is slow) and scaled to notes/s.
- ``ort-plain``: onnxruntime on the same maths written with standard ONNX ops, batch of 32
  padded to its longest note, ORT_ENABLE_ALL.
- ``opencortex``: ``MiniLMEmbedder`` (fused com.microsoft ops, sorted by length, runs of
  <= token_budget padded tokens).

Also printed: the fp32 compute floor of this CPU for these notes ("floor notes/s": the notes/s
if every FLOP of the forward pass -- its GEMMs and attention products, counted from the model's
config at the workload's mean token count -- ran at the cores' peak fp32 FMA rate, from
``lscpu``: cores x clock x fp32 FLOP/cycle of the SIMD width and FMA pipes) and
"measured/floor".  Override the CPU figures with ``--ghz`` / ``--flop-per-cycle`` where the
table below guesses wrong.  Also printed: model load time (cold = graph built into an empty cache; warm = cached graph;
each in a fresh interpreter, imports included) and the cosine check against
../shared/models/minilm-reference.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus" / "org" / "files"
REFERENCE = SHARED / "models" / "minilm-reference.json"
sys.path.insert(0, str(REPO / "src"))

from opencortex.embed._bert_onnx import build_graph, read_config, read_safetensors  # noqa: E402
from opencortex.embed.minilm import MiniLMEmbedder  # noqa: E402

TARGET_TOKENS = 250


def org_sections() -> list[str]:
    out: list[str] = []
    for path in sorted(CORPUS.rglob("*.org")):
        text = path.read_text(encoding="utf-8", errors="replace")
        out += [s for s in re.split(r"\n(?=\*+ )", text) if s.strip()]
    return out


def make_notes(emb: MiniLMEmbedder, count: int) -> list[str]:
    """Org sections with >= 256 tokens, cut at a token boundary to ~250 tokens."""
    notes: list[str] = []
    for section in org_sections():
        enc = emb._tok.encode(section)
        if len(enc.ids) < emb.max_seq_length:  # truncated at 256: long enough
            continue
        notes.append(section[:enc.offsets[TARGET_TOKENS - 2][1]])  # + [CLS] + [SEP]
        if len(notes) == count:
            return notes
    raise SystemExit(f"only {len(notes)} long sections in {CORPUS}")


def mixed_notes(count: int) -> list[str]:
    """Org sections as they come (most are short), spread over the corpus."""
    secs = org_sections()
    return [secs[i * len(secs) // count] for i in range(count)]


# -- baseline 1: numpy forward pass ----------------------------------------------------------
def _erf(x: np.ndarray) -> np.ndarray:
    """Abramowitz-Stegun 7.1.26 (|error| < 1.5e-7): numpy has no erf and scipy is not a dep."""
    s = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t
               + 0.254829592) * t * np.exp(-a * a)
    return (s * y).astype(np.float32)


def _ln(x: np.ndarray, g: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


class NumpyForward:
    """The textbook BERT forward pass in numpy: the baseline any faster path must beat."""

    def __init__(self, emb: MiniLMEmbedder) -> None:
        self.cfg = read_config(emb.model_dir)
        raw = read_safetensors(emb.model_dir / "model.safetensors")
        self.w = {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in raw.items()}
        for k in list(self.w):
            if k.endswith(".weight") and self.w[k].ndim == 2 and "embeddings" not in k:
                self.w[k] = np.ascontiguousarray(self.w[k].T)
        self.tok = emb._tok

    def embed(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        out = []
        for i in range(0, len(texts), batch_size):
            encs = self.tok.encode_batch(list(texts[i:i + batch_size]))
            width = max(len(e.ids) for e in encs)
            ids = np.zeros((len(encs), width), np.int64)
            mask = np.zeros((len(encs), width), np.float32)
            for r, e in enumerate(encs):
                ids[r, :len(e.ids)] = e.ids
                mask[r, :len(e.ids)] = 1
            out.append(self._forward(ids, mask))
        return np.concatenate(out)

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        w, c = self.w, self.cfg
        B, S = ids.shape
        dh = c.hidden // c.heads
        x = (w["embeddings.word_embeddings.weight"][ids]
             + w["embeddings.position_embeddings.weight"][:S]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = _ln(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], c.eps)
        x = x.reshape(B * S, c.hidden)  # 2-D activations: one BLAS call per dense layer
        bias = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :]
        for i in range(c.layers):
            p = f"encoder.layer.{i}."

            def heads(n: str, x: np.ndarray = x, p: str = p) -> np.ndarray:
                t = x @ w[p + f"attention.self.{n}.weight"] + w[p + f"attention.self.{n}.bias"]
                return t.reshape(B, S, c.heads, dh).transpose(0, 2, 1, 3)

            q, k, v = heads("query"), heads("key"), heads("value")
            s = (q @ k.transpose(0, 1, 3, 2)) / np.float32(np.sqrt(dh)) + bias
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            ctx = (s @ v).transpose(0, 2, 1, 3).reshape(B * S, c.hidden)
            a = ctx @ w[p + "attention.output.dense.weight"] + w[p + "attention.output.dense.bias"]
            x = _ln(a + x, w[p + "attention.output.LayerNorm.weight"],
                    w[p + "attention.output.LayerNorm.bias"], c.eps)
            h = x @ w[p + "intermediate.dense.weight"] + w[p + "intermediate.dense.bias"]
            h = 0.5 * h * (1.0 + _erf(h / np.float32(np.sqrt(2.0))))
            o = h @ w[p + "output.dense.weight"] + w[p + "output.dense.bias"]
            x = _ln(o + x, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], c.eps)
        x = x.reshape(B, S, c.hidden)
        pooled = (x * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        return (pooled / np.linalg.norm(pooled, axis=1, keepdims=True)).astype(np.float32)


# -- baseline 2: onnxruntime on a standard-op graph, no length sorting -----------------------
class OrtPlain:
    """onnxruntime with all graph optimisations, but standard ops and whole padded batches."""

    def __init__(self, emb: MiniLMEmbedder, threads: int) -> None:
        import onnxruntime as ort

        model = build_graph(read_safetensors(emb.model_dir / "model.safetensors"),
                            read_config(emb.model_dir), fused=False)
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.intra_op_num_threads = threads
        opts.log_severity_level = 3
        self.sess = ort.InferenceSession(model.SerializeToString(), opts,
                                         providers=["CPUExecutionProvider"])
        self.tok = emb._tok

    def embed(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        out = []
        for i in range(0, len(texts), batch_size):
            encs = self.tok.encode_batch(list(texts[i:i + batch_size]))
            width = max(len(e.ids) for e in encs)
            ids = np.zeros((len(encs), width), np.int64)
            mask = np.zeros_like(ids)
            for r, e in enumerate(encs):
                ids[r, :len(e.ids)] = e.ids
                mask[r, :len(e.ids)] = 1
            out.append(self.sess.run(None, {"input_ids": ids, "attention_mask": mask})[0])
        return np.concatenate(out)


# -- the compute floor ---------------------------------------------------------------------
def forward_flops(h: int, inter: int, layers: int, tokens: float) -> float:
    """fp32 FLOPs (multiply and add counted apart) of one BERT encoder pass over one text of
    ``tokens`` tokens: per layer the Q, K, V and output projections (4 x T x H x H MACs), the
    feed-forward pair (2 x T x H x I) and the attention products Q.K^T and P.V (2 x T x T x H);
    embeddings, layer norms, softmax, GELU and pooling are O(T x H) and left out (< 1%)."""
    macs = layers * (tokens * (4 * h * h + 2 * h * inter) + 2 * tokens * tokens * h)
    return 2.0 * macs


def _lscpu() -> dict[str, str]:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return {}
    return {k.strip(): v.strip() for k, _, v in (ln.partition(":") for ln in out.splitlines())}


def cpu_peak(ghz: float | None = None, flop_per_cycle: float | None = None
             ) -> tuple[float, str]:
    """Peak fp32 FLOP/s of this machine's cores (GFLOP/s x 1e9) and how it was computed.

    FLOP/cycle per core = FMA pipes x fp32 lanes of their datapath x 2 (an FMA is 2 FLOPs):
    AMD family 25 (Zen 3/4): 2 pipes of 256 bits (Zen 4 runs AVX-512 as two 256-bit halves),
    so 32; Intel with AVX-512: 2 x 512 bits = 64 (1 pipe on some client parts: over-estimates,
    which only raises the floor); AVX2 + FMA: 2 x 256 = 32; else SSE, no FMA: 2 x 128-bit
    pipes, a mul and an add, 16.  The clock is lscpu's max MHz, else /proc/cpuinfo's
    "cpu MHz" (under a hypervisor often the nominal clock: a turbo clock would raise the floor)."""
    info = _lscpu()
    flags = set(info.get("Flags", "").split())
    cores = int(info.get("Core(s) per socket", "0") or 0) * int(info.get("Socket(s)", "1") or 1)
    cores = cores or os.cpu_count() or 1
    how = []
    if ghz is None:
        mhz = info.get("CPU max MHz")
        if not mhz:
            mhz = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo")
                        if ln.startswith("cpu MHz")), "0")
            how.append("clock from /proc/cpuinfo 'cpu MHz'")
        else:
            how.append("clock from lscpu 'CPU max MHz'")
        ghz = float(mhz) / 1000
    else:
        how.append("clock given")
    if flop_per_cycle is None:
        vendor, family = info.get("Vendor ID", ""), info.get("CPU family", "")
        if vendor == "AuthenticAMD" and family == "25":
            flop_per_cycle, why = 32, "AMD family 25: 2 FMA pipes x 8 fp32 lanes (256-bit) x 2"
        elif "avx512f" in flags:
            flop_per_cycle, why = 64, "AVX-512: 2 FMA pipes x 16 fp32 lanes x 2"
        elif "avx2" in flags and "fma" in flags:
            flop_per_cycle, why = 32, "AVX2+FMA: 2 FMA pipes x 8 fp32 lanes x 2"
        else:
            flop_per_cycle, why = 16, "SSE: 2 pipes x 4 fp32 lanes x (mul + add)"
        how.append(why)
    else:
        how.append("FLOP/cycle given")
    peak = cores * ghz * 1e9 * flop_per_cycle
    return peak, (f"{cores} cores x {ghz:.3f} GHz x {flop_per_cycle:g} fp32 FLOP/cycle = "
                  f"{peak / 1e9:.1f} GFLOP/s ({'; '.join(how)})")


# -- measurements ----------------------------------------------------------------------------
def cosines(embed: Callable[[list[str]], np.ndarray]) -> np.ndarray:
    items = json.loads(REFERENCE.read_text(encoding="utf-8"))["items"]
    ref = np.array([it["embedding"] for it in items], np.float32)
    got = embed([it["text"] for it in items])
    return (got * ref).sum(1) / np.linalg.norm(ref, axis=1) / np.linalg.norm(got, axis=1)


def load_time(cache: Path) -> float:
    """Import + construct in a fresh interpreter (what a CLI start pays)."""
    code = ("import time; t = time.perf_counter(); "
            "from opencortex.embed.minilm import MiniLMEmbedder; "
            f"MiniLMEmbedder(cache_dir={str(cache)!r}); print(time.perf_counter() - t)")
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True)
    return float(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--notes", type=int, default=96, help="notes per run (default 96)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (median of)")
    ap.add_argument("--threads", type=int, default=2, help="onnxruntime intra-op threads")
    ap.add_argument("--sweep", action="store_true", help="also try other token budgets")
    ap.add_argument("--no-numpy", action="store_true", help="skip the slow numpy baseline")
    ap.add_argument("--ghz", type=float, help="core clock for the floor (default: lscpu)")
    ap.add_argument("--flop-per-cycle", type=float,
                    help="fp32 FLOP/cycle per core for the floor (default: from lscpu)")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        cold = load_time(Path(tmp))
        warm = sorted(load_time(Path(tmp)) for _ in range(3))[1]
    emb = MiniLMEmbedder(threads=args.threads)
    workloads = {"~250-token notes": make_notes(emb, args.notes),
                 "mixed Org sections": mixed_notes(args.notes)}

    configs: dict[str, Callable[[list[str]], np.ndarray]] = {}
    if not args.no_numpy:
        configs["numpy-forward (baseline)"] = NumpyForward(emb).embed
    configs["ort-plain"] = OrtPlain(emb, args.threads).embed
    configs[f"opencortex (budget {emb.token_budget})"] = emb.embed
    if args.sweep:
        for budget in (1024, 4096, 8192):
            e = MiniLMEmbedder(threads=args.threads, token_budget=budget)
            configs[f"opencortex (budget {budget})"] = e.embed

    for f in configs.values():  # warm-up: first runs allocate arenas
        f(workloads["~250-token notes"][:32])
    cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo")
                if ln.startswith("model name")), platform.processor())
    blas_env = {k: v for k, v in os.environ.items() if "BLAS" in k or k.startswith("OMP_")}
    print(f"# Embedding speed: batch 32, median of {args.rounds} interleaved rounds\n")
    peak, peak_how = cpu_peak(args.ghz, args.flop_per_cycle)
    peak_cores = int(peak_how.split(" cores", 1)[0])
    raw_cfg = json.loads((emb.model_dir / "config.json").read_text(encoding="utf-8"))
    shape = (int(raw_cfg["hidden_size"]), int(raw_cfg["intermediate_size"]),
             int(raw_cfg["num_hidden_layers"]))
    print(f"CPU: {cpu}, {os.cpu_count()} vCPU; onnxruntime intra-op threads {args.threads}; "
          f"BLAS env: {blas_env or 'none'}; load average {os.getloadavg()[0]:.2f}\n")
    print(f"fp32 peak: {peak_how}\n")
    for label, notes in workloads.items():
        counts = emb.token_counts(notes)
        times: dict[str, list[float]] = {k: [] for k in configs}
        cpus: dict[str, list[float]] = {k: [] for k in configs}
        for _ in range(args.rounds):
            for name, f in configs.items():
                part = notes[:32] if name.startswith("numpy") else notes  # slow: one batch
                t, c = time.perf_counter(), time.process_time()
                f(part)
                times[name].append((time.perf_counter() - t) * len(notes) / len(part))
                cpus[name].append((time.process_time() - c) * len(notes) / len(part))
        base_name = next(iter(configs))
        base = len(notes) / statistics.median(times[base_name])
        print(f"## {label}: {len(notes)} notes of {min(counts)}-{max(counts)} tokens "
              f"(mean {statistics.mean(counts):.0f}, truncated at {emb.max_seq_length})\n")
        # the floor: every note's own token count (as the embedder pads only to its run)
        flops = statistics.mean(forward_flops(*shape, n) for n in counts)
        floor = peak / flops
        print(f"floor notes/s: {floor:.1f} ({flops / 1e9:.2f} GFLOP per note on average)\n")
        # per CPU second (all threads): what the cores would give if the process had them to
        # itself -- less disturbed by other jobs than wall time on a shared machine
        print("| configuration | notes/s (median) | runs | vs baseline | measured/floor "
              "| notes per CPU-s x cores / floor |")
        print("|---|---|---|---|---|---|")
        cores = peak_cores
        for name, ts in times.items():
            rate = len(notes) / statistics.median(ts)
            cpu_rate = len(notes) / max(statistics.median(cpus[name]), 1e-9) * cores
            runs = ", ".join(f"{len(notes) / t:.1f}" for t in ts)
            print(f"| {name} | {rate:.1f} | {runs} | {rate / base:.2f}x | {rate / floor:.2f} "
                  f"| {cpu_rate / floor:.2f} |")
        print()

    cos = cosines(emb.embed)
    base_cos = cosines(next(iter(configs.values()))) if not args.no_numpy else None
    print(f"Load (fresh interpreter, imports included): cold (builds graph) {cold:.2f} s, "
          f"warm (cached graph) {warm:.2f} s\n")
    print(f"Cosine vs reference ({len(cos)} items): min {cos.min():.6f}, mean {cos.mean():.6f}, "
          f"items < 0.999: {int((cos < 0.999).sum())}"
          + (f"; numpy baseline min {base_cos.min():.6f}" if base_cos is not None else ""))


if __name__ == "__main__":
    main()
