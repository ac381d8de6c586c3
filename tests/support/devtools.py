"""A headless Chromium driven over the Chrome DevTools Protocol (websocket-client): the browser tests and
``benchmarks/site_load.py`` open pages with it."""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


class DevTools:
    """A minimal Chrome DevTools Protocol client over one page target (websocket-client)."""

    def __init__(self, ws_url: str) -> None:
        import websocket

        self.ws = websocket.create_connection(ws_url, timeout=30, suppress_origin=True)
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.events.append(msg)

    def wait_for(self, event: str, timeout: float = 30.0) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if any(e.get("method") == event for e in self.events):
                return
            self.ws.settimeout(max(0.1, end - time.monotonic()))
            self.events.append(json.loads(self.ws.recv()))
        raise TimeoutError(event)

    def evaluate(self, expression: str) -> Any:
        res = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in res:
            raise RuntimeError(f"{expression[:80]}...: {res['exceptionDetails']}")
        return res["result"].get("value")

    def open(self, url: str) -> list[str]:
        """Navigate and wait for the load event; return the console errors and exceptions it caused."""
        self.events.clear()
        self.call("Page.navigate", url=url)
        self.wait_for("Page.loadEventFired")
        self.evaluate("new Promise(r => setTimeout(r, 50))")  # let late handlers run
        errors = []
        for e in self.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.exceptionThrown":
                errors.append(f"exception: {p['exceptionDetails'].get('text')} {p['exceptionDetails'].get('exception', {})}")
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert", "warning"):
                errors.append(f"console.{p['type']}: {[a.get('value') for a in p.get('args', [])]}")
            elif m == "Log.entryAdded" and p["entry"].get("level") in ("error", "warning"):
                errors.append(f"log {p['entry']['level']}: {p['entry'].get('text')} {p['entry'].get('url', '')}")
        return errors


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def open_devtools(chromium: str | None = None, profile: Path | None = None) -> Iterator[DevTools]:
    """A fresh headless Chromium (``chromium`` or the one on PATH) with one page, closed on exit."""
    exe = chromium or next((p for p in (shutil.which("chromium"), shutil.which("chromium-browser")) if p), None)
    if exe is None:
        raise RuntimeError("chromium is not installed (make system-deps, or: apt-get install chromium)")
    with contextlib.ExitStack() as stack:
        folder = profile or Path(stack.enter_context(tempfile.TemporaryDirectory()))
        port = _free_port()
        proc = subprocess.Popen([exe, *FLAGS, f"--user-data-dir={folder / 'profile'}",
                                 f"--remote-debugging-port={port}", "about:blank"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            targets: list[dict[str, Any]] = []
            for _ in range(200):
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=2) as r:
                        targets = [t for t in json.load(r) if t.get("type") == "page"]
                    if targets:
                        break
                except OSError:
                    pass
                time.sleep(0.1)
            if not targets:
                raise RuntimeError("chromium did not open its DevTools endpoint")
            dt = DevTools(targets[0]["webSocketDebuggerUrl"])
            for domain in ("Page", "Runtime", "Log"):
                dt.call(f"{domain}.enable")
            try:
                yield dt
            finally:
                dt.ws.close()
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
