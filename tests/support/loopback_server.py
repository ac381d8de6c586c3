"""A real OpenAI-compatible HTTP server on loopback, answering from a real model, with injectable faults.

Not a test module: tests start it (``with LoopbackServer(SmolLM2Chat(...), faults=...) as srv: srv.base_url``).

- ``POST /v1/chat/completions``: the chat messages go through the model's chat template; greedy decoding up to
  ``max_tokens`` (default 16); ``choices[0].message.content``; with ``logprobs: true, top_logprobs: k`` also
  ``choices[0].logprobs.content[0].top_logprobs`` = [{token, logprob, bytes}] of the first generated position.
- ``GET /v1/models``.
- Faults (:class:`Faults`): a seeded share of requests answered 500, 429 (with ``Retry-After``) or never answered
  (the handler waits ``hang_s``, past the client's timeout, then drops the connection), decided per (request
  content, attempt number) so reruns see the same faults; and substrings that make a request ALWAYS fail (500).
- Bounded: hanging handlers wake when the server stops; ``stop()`` shuts down and joins.
- ``api_key``: when set, requests without ``Authorization: Bearer <api_key>`` get 401.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


class SmolLM2Chat:
    """Greedy chat completions from a causal LM loaded with transformers (thread-safe; results memoized)."""

    def __init__(self, model: Any, tokenizer: Any) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.lock = threading.Lock()
        self.memo: dict[str, dict[str, Any]] = {}
        self.calls = 0

    @classmethod
    def load(cls, model_dir: str | Path, gguf_file: str | None = None, threads: int = 1) -> SmolLM2Chat:
        """Load a causal LM (e.g. SmolLM2's GGUF file) with transformers."""
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        torch.set_num_threads(threads)
        kw: dict[str, Any] = {"gguf_file": gguf_file} if gguf_file else {}
        return cls(AutoModelForCausalLM.from_pretrained(str(model_dir), **kw).eval(),
                   AutoTokenizer.from_pretrained(str(model_dir), **kw))

    def complete(self, messages: list[dict[str, str]], max_tokens: int, top_logprobs: int | None) -> dict[str, Any]:
        """{text, finish_reason, prompt_tokens, completion_tokens, first: {token, logprob, top: [(token, logprob)]}}."""
        import torch

        key = json.dumps([messages, max_tokens, top_logprobs], sort_keys=True)
        with self.lock:
            if key in self.memo:
                return self.memo[key]
            self.calls += 1
            text = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
            ids = self.tokenizer(text, add_special_tokens=False, return_tensors="pt")["input_ids"]
            with torch.inference_mode():
                out = self.model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=max_tokens,
                                          do_sample=False, num_beams=1, output_logits=True, return_dict_in_generate=True,
                                          pad_token_id=self.tokenizer.pad_token_id)
            new = out.sequences[0, ids.shape[1]:].tolist()
            eos = self.tokenizer.eos_token_id
            finish = "stop" if eos in new else "length"
            visible = new[: new.index(eos)] if eos in new else new
            lp = torch.log_softmax(out.logits[0][0].float(), dim=-1)
            k = max(1, top_logprobs or 1)
            top_lp, top_ids = lp.topk(k)
            first_id = new[0]
            result = {
                "text": self.tokenizer.decode(visible, skip_special_tokens=True),
                "finish_reason": finish,
                "prompt_tokens": int(ids.shape[1]),
                "completion_tokens": len(new),
                "first": {
                    "token": self.tokenizer.decode([first_id]),
                    "logprob": float(lp[first_id]),
                    "top": [(self.tokenizer.decode([t]), float(v)) for t, v in zip(top_ids.tolist(), top_lp.tolist(), strict=True)],
                },
            }
            self.memo[key] = result
            return result


class FixedChat:
    """A model that gives the same answer to every prompt (an endpoint whose model ignores the instructions)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.calls = 0

    def complete(self, messages: list[dict[str, str]], max_tokens: int, top_logprobs: int | None) -> dict[str, Any]:
        self.calls += 1
        first = self.text.split()[0] if self.text.split() else ""
        return {"text": self.text, "finish_reason": "stop", "prompt_tokens": 1, "completion_tokens": 1,
                "first": {"token": first, "logprob": 0.0, "top": [(first, 0.0)]}}


@dataclass
class Faults:
    """Which requests fail. Shares are of (request, attempt) pairs, decided by a seeded hash."""

    share_500: float = 0.0
    share_429: float = 0.0
    share_hang: float = 0.0
    seed: int = 0
    always_fail: tuple[str, ...] = ()
    garbage: tuple[str, ...] = ()
    """Substrings that make the server answer 200 with a body that is not JSON (a broken proxy)."""
    empty_choices: tuple[str, ...] = ()
    """Substrings that make the server answer 200 with a completion whose ``choices`` list is empty."""
    hang_s: float = 3.0
    retry_after_s: float = 0.05

    def decide(self, content: str, key: str, attempt: int) -> str:
        """``ok``, ``500``, ``429``, ``hang``, ``garbage``, ``empty`` or ``always`` for the ``attempt``-th arrival of
        request ``key``."""
        if any(s in content for s in self.always_fail):
            return "always"
        if any(s in content for s in self.garbage):
            return "garbage"
        if any(s in content for s in self.empty_choices):
            return "empty"
        digest = hashlib.sha256(f"{self.seed}:{key}:{attempt}".encode()).digest()
        u = int.from_bytes(digest[:8], "big") / 2**64
        if u < self.share_500:
            return "500"
        if u < self.share_500 + self.share_429:
            return "429"
        if u < self.share_500 + self.share_429 + self.share_hang:
            return "hang"
        return "ok"


@dataclass
class Stats:
    outcomes: Counter = field(default_factory=Counter)
    attempts: Counter = field(default_factory=Counter)
    auth_headers: list[str] = field(default_factory=list)


class LoopbackServer:
    """ThreadingHTTPServer on 127.0.0.1 (free port) serving an OpenAI-compatible chat completions API."""

    def __init__(self, llm: SmolLM2Chat, faults: Faults | None = None, model_name: str = "smollm2-135m-instruct",
                 api_key: str | None = None, offer_logprobs: bool = True) -> None:
        self.llm = llm
        self.offer_logprobs = offer_logprobs
        self.faults = faults or Faults()
        self.model_name = model_name
        self.api_key = api_key
        self.stats = Stats()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> LoopbackServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # silence the default stderr log
                pass

            def _send(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def _authorized(self) -> bool:
                auth = self.headers.get("Authorization", "")
                with server._lock:
                    server.stats.auth_headers.append(auth)
                if server.api_key is None or auth == f"Bearer {server.api_key}":
                    return True
                self._send(401, {"error": {"message": "invalid api key", "type": "invalid_request_error"}})
                return False

            def do_GET(self) -> None:
                if not self._authorized():
                    return
                if self.path.rstrip("/") == "/v1/models":
                    self._send(200, {"object": "list", "data": [
                        {"id": server.model_name, "object": "model", "created": 0, "owned_by": "loopback"}]})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_HEAD(self) -> None:  # only /v1/models exists: a Hugging Face hub client pointed here gets 404s
                self.send_response(200 if self.path.rstrip("/") == "/v1/models" else 404)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                if not self._authorized():
                    return
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                try:
                    body = json.loads(raw)
                    messages = body["messages"]
                except (ValueError, KeyError) as exc:
                    self._send(400, {"error": {"message": f"bad request: {exc}"}})
                    return
                key = hashlib.sha256(raw).hexdigest()
                content = "\n".join(str(m.get("content", "")) for m in messages)
                with server._lock:
                    attempt = server.stats.attempts[key]
                    server.stats.attempts[key] += 1
                outcome = server.faults.decide(content, key, attempt)
                with server._lock:
                    server.stats.outcomes[outcome] += 1
                if outcome in ("500", "always"):
                    self._send(500, {"error": {"message": "injected server error", "type": "server_error"}})
                    return
                if outcome == "garbage":
                    data = b"<html><body>502 Bad Gateway (proxy)</body>"
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                if outcome == "empty":
                    self._send(200, {"id": f"chatcmpl-{key[:12]}", "object": "chat.completion",
                                     "created": int(time.time()), "model": server.model_name, "choices": []})
                    return
                if outcome == "429":
                    self._send(429, {"error": {"message": "injected rate limit", "type": "rate_limit"}},
                               {"Retry-After": str(server.faults.retry_after_s)})
                    return
                if outcome == "hang":
                    server._stop.wait(server.faults.hang_s)
                    self.close_connection = True
                    return
                top_k = int(body.get("top_logprobs") or 0) if body.get("logprobs") and server.offer_logprobs else None
                res = server.llm.complete(messages, int(body.get("max_tokens") or body.get("max_completion_tokens") or 16),
                                          top_k)
                logprobs = None
                if top_k is not None:
                    first = res["first"]
                    logprobs = {"content": [{
                        "token": first["token"], "logprob": first["logprob"], "bytes": list(first["token"].encode()),
                        "top_logprobs": [{"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in first["top"][:top_k]],
                    }]}
                self._send(200, {
                    "id": f"chatcmpl-{key[:12]}", "object": "chat.completion", "created": int(time.time()),
                    "model": server.model_name,
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": res["text"]},
                                 "finish_reason": res["finish_reason"], "logprobs": logprobs}],
                    "usage": {"prompt_tokens": res["prompt_tokens"], "completion_tokens": res["completion_tokens"],
                              "total_tokens": res["prompt_tokens"] + res["completion_tokens"]},
                })

        self._stop.clear()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
