"""Turn a GGUF model file into a normal Hugging Face model folder (config, safetensors, tokenizer).

vLLM loads model folders; transformers loads a GGUF file (``gguf_file=``) by dequantizing it, but refuses to
``save_pretrained`` a model loaded that way. So the model is built from the GGUF's config and given the
dequantized state dict, which gives a folder that vLLM (and ``hf``) load like any other::

    python -m autograde.grading.convert path/to/SmolLM2-135M-Instruct.Q4_1.gguf models/smollm2 --dtype float32

Both backends then see the same weights: ``hf`` with ``model: path/to/file.gguf`` and ``vllm`` with
``model: models/smollm2`` grade with identical token ids (see ``docs/vllm.md``). Runs where transformers,
torch and ``gguf`` are installed (the project's main environment), not in the vLLM environment.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from autograde.core.errors import AutogradeError
from autograde.core.ids import file_sha256
from autograde.core.log import logger, setup_logging

MARKER = "autograde-converted.json"
"""Written last into a converted folder: the source file's sha256 and the dtype (a rerun with the same
source and dtype does nothing)."""


class ConversionError(AutogradeError):
    """A GGUF file cannot be converted (missing, not a causal LM, or transformers cannot read it)."""


def converted_from(out_dir: str | Path) -> dict[str, Any] | None:
    """What ``out_dir`` was converted from (``{source, sha256, dtype}``), None if it is no finished conversion."""
    marker = Path(out_dir) / MARKER
    try:
        return json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _same_conversion(done: dict[str, Any] | None, sha: str, dtype: str) -> bool:
    """Whether a finished conversion's marker (``converted_from``) is of the file with ``sha`` at ``dtype``."""
    return done is not None and done.get("sha256") == sha and done.get("dtype") == dtype


def _dequantized(src: Path, dtype: str) -> tuple[Any, Any]:
    """The causal LM of GGUF file ``src`` with dequantized ``dtype`` weights, in a model that can be saved, and its
    tokenizer."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    torch_dtype = getattr(torch, dtype)
    kw = {"gguf_file": src.name, "local_files_only": True}
    try:
        config = AutoConfig.from_pretrained(str(src.parent), **kw)
        if getattr(config, "is_encoder_decoder", False):
            raise ConversionError(f"{src}: an encoder-decoder model; only causal LMs are converted")
        loaded = AutoModelForCausalLM.from_pretrained(str(src.parent), dtype=torch_dtype, **kw)
        tokenizer = AutoTokenizer.from_pretrained(str(src.parent), **kw)
    except (OSError, ValueError) as exc:
        raise ConversionError(f"{src}: transformers cannot load it ({exc})") from exc
    # a model built from the config (not loaded with gguf_file=) can be saved; give it the dequantized weights
    model = AutoModelForCausalLM.from_config(config, dtype=torch_dtype)
    missing, unexpected = model.load_state_dict(loaded.state_dict(), strict=False)
    tied = {k for k in missing if k.endswith("lm_head.weight")} if getattr(config, "tie_word_embeddings", False) else set()
    if set(missing) - tied or unexpected:
        raise ConversionError(f"{src}: weights do not match the config (missing {sorted(set(missing) - tied)[:5]}, "
                              f"unexpected {sorted(unexpected)[:5]})")
    return model, tokenizer


def gguf_to_model_dir(gguf: str | Path, out_dir: str | Path, dtype: str = "float32") -> Path:
    """Write the model of ``gguf`` (a causal LM) as a model folder at ``out_dir``; returns ``out_dir``.

    Idempotent: a folder already converted from a file with the same sha256 and ``dtype`` is kept as it is.
    The folder is built in a temporary sibling and renamed into place, so a killed conversion leaves nothing
    that looks finished.
    """
    src = Path(gguf)
    out = Path(out_dir)
    if not src.is_file():
        raise ConversionError(f"{src}: no such GGUF file (fix: give the path of a .gguf file)")
    if dtype not in ("float32", "bfloat16", "float16"):
        raise ConversionError(f"dtype {dtype!r} is not one of float32, bfloat16, float16")
    sha = file_sha256(str(src))
    done = converted_from(out)
    if _same_conversion(done, sha, dtype):
        logger.info("convert: %s is already converted from %s (%s)", out, src.name, dtype)
        return out
    if out.exists() and done is None and any(out.iterdir()):
        raise ConversionError(f"{out} exists and is not a folder converted by autograde (fix: choose another folder)")
    model, tokenizer = _dequantized(src, dtype)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    tmp.chmod(0o755)  # mkdtemp makes it private; a model folder is as readable as any other output
    try:
        model.save_pretrained(tmp, safe_serialization=True)
        tokenizer.save_pretrained(tmp)
        (tmp / MARKER).write_text(json.dumps({"source": src.name, "sha256": sha, "dtype": dtype}, indent=2) + "\n")
        try:
            if _same_conversion(converted_from(out), sha, dtype):
                return out  # another process finished the same conversion meanwhile: keep its folder (in use)
            if out.exists():
                shutil.rmtree(out)
            os.replace(tmp, out)
        except OSError:  # another process converted the same file at the same time: its folder is as good
            if not _same_conversion(converted_from(out), sha, dtype):
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    logger.info("convert: wrote %s from %s (%s)", out, src.name, dtype)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m autograde.grading.convert", description=__doc__.split("\n\n")[0])
    ap.add_argument("gguf", help="the .gguf file (a causal LM)")
    ap.add_argument("out", help="the model folder to write")
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    args = ap.parse_args(argv)
    setup_logging()
    try:
        gguf_to_model_dir(args.gguf, args.out, args.dtype)
    except AutogradeError as exc:
        logger.error("%s", exc)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
