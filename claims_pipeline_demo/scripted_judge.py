"""A scripted judge server: real HTTP on 127.0.0.1 speaking the Anthropic Messages and OpenAI Chat Completions
wire formats, answering from a script instead of a model. Tests, the demo and the benchmark point the real SDKs
at it by base URL.

    with ScriptedJudgeServer(demo_answerer) as srv:
        settings.judge.base_url = srv.anthropic_url   # or srv.openai_url
        ... srv.requests() / srv.count / srv.input_tokens ...

Answers come from a callable (ScriptedRequest -> Answer | dict) and/or per-claim queues (`srv.script(claim_id,
Answer(...), ...)`: each request for that claim pops the next one; the callable answers once the queue is empty).
An Answer may carry a fault: delay_s, "429" (with Retry-After), "500", "hang" (reads the request, never answers,
until the client gives up), "truncated" (the answer cut at half, stop_reason max_tokens / finish_reason length),
"malformed" (not JSON). Tokens are counted by the server's own method (count_tokens: a word/punctuation
tokenizer), independent of the pipeline's estimate. `demo_answerer` answers honestly from the page text it
receives, reading figures with the project's own number and date readers (the priors' readers) and the same
evidence rules code checks (judge/evidence.py), so its verdicts agree with the priors; it answers the
direction-B ask too. It is labelled as a scripted demo judge, not a model.

A request is a first ask (kind "verdict") or a direction-B ask (kind "direction_b"); `srv.script(...)` queues
answers for the first, `srv.script_b(...)` for the second.
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from claims_pipeline.judge.model import SCRIPTED_MODEL
from claims_pipeline.judge.prompt import PAGE_FENCE_RE, PAGE_OPEN

DEMO_NOTE = "scripted demo judge (reads the page with the project's number and date readers, not a language model)"

_TOKEN_RE = re.compile(r"[A-Za-z]+|\d|[^\sA-Za-z\d]")


def count_tokens(text: str) -> int:
    """The server's own token count: letters runs (a long word counts one token per 6 letters, as BPE splits
    rare long words), each digit one token, each other non-space character one token."""
    n = 0
    for tok in _TOKEN_RE.findall(text):
        n += -(-len(tok) // 6) if tok[0].isalpha() else 1
    return n


@dataclass
class Answer:
    """One scripted answer. `body`: the answer object (dict) or raw text; faults replace or disturb it."""

    body: dict[str, Any] | str | None = None
    delay_s: float = 0.0
    fault: str | None = None  # None | "429" | "500" | "hang" | "truncated" | "malformed"
    retry_after_s: float = 0.05
    hang_s: float = 30.0


@dataclass
class ScriptedRequest:
    wire: str  # "anthropic" | "openai"
    body: dict[str, Any]
    claim_id: str
    claim_text: str
    figures: list[str]
    page_text: str
    citations_enabled: bool
    scope: str = ""
    line_no: int | None = None
    source_url: str = ""
    kind: str = "verdict"  # "verdict" | "direction_b"
    figure_types: list[str] = field(default_factory=list)


@dataclass
class LoggedRequest:
    wire: str
    claim_id: str
    status: int
    input_tokens: int
    output_tokens: int
    started: float
    ended: float
    body: dict[str, Any] = field(repr=False, default_factory=dict)
    headers: dict[str, str] = field(repr=False, default_factory=dict)
    kind: str = "verdict"  # "verdict" | "direction_b"


def _field(text: str, name: str) -> str:
    m = re.search(rf"^{re.escape(name)}: (.*)$", text, re.MULTILINE)
    return m.group(1).strip() if m else ""


def _parse_request(wire: str, body: dict[str, Any]) -> ScriptedRequest:
    texts: list[str] = []
    page = ""
    citations = False
    for msg in body.get("messages") or []:
        if msg.get("role") != "user":  # the system prompt names the page markers too
            continue
        content = msg.get("content")
        if isinstance(content, str):
            texts.append(content)
            continue
        for block in content or []:
            if block.get("type") == "text":
                texts.append(block.get("text", ""))
            elif block.get("type") == "document":
                page = (block.get("source") or {}).get("data", "")
                citations = bool((block.get("citations") or {}).get("enabled"))
    user = "\n".join(texts)
    fence = PAGE_FENCE_RE.search(user)
    if not page and fence:
        page = fence.group(2)
    claim_part = user.split(PAGE_OPEN, 1)[0]
    figures_line = _field(claim_part, "salient figures (the first carries the claim)")
    parts = [f.rsplit(" (", 1) for f in figures_line.split(", ")] if figures_line and "(none" not in figures_line else []
    figures = [p[0] for p in parts]
    types = [p[1].rstrip(")") if len(p) > 1 else "" for p in parts]
    line_no = _field(claim_part, "line_no")
    return ScriptedRequest(
        wire=wire, body=body, claim_id=_field(claim_part, "id"), claim_text=_field(claim_part, "claim text"),
        figures=figures, page_text=page, citations_enabled=citations, scope=_field(claim_part, "scope"),
        line_no=int(line_no) if line_no.isdigit() else None, source_url=_field(claim_part, "source_url"),
        kind="direction_b" if _field(claim_part, "ask") == "direction_b" else "verdict", figure_types=types,
    )


def _request_text(body: dict[str, Any]) -> str:
    parts: list[str] = []
    system = body.get("system")
    if isinstance(system, str):
        parts.append(system)
    elif isinstance(system, list):
        parts += [b.get("text", "") for b in system if isinstance(b, dict)]
    for msg in body.get("messages") or []:
        content = msg.get("content")
        if isinstance(content, str):
            parts.append(content)
            continue
        for block in content or []:
            if block.get("type") == "text":
                parts.append(block.get("text", ""))
            elif block.get("type") == "document":
                parts.append((block.get("source") or {}).get("data", ""))
    return "\n".join(parts)


def _conform(answer: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """What a server honouring a json_schema response_format returns: only the schema's keys, all present."""
    props = schema.get("properties") or {}
    out: dict[str, Any] = {}
    for key, spec in props.items():
        if key in answer:
            out[key] = answer[key]
        else:
            kind = spec.get("type")
            out[key] = {"string": "", "integer": 0, "number": 0, "boolean": None}.get(kind, {"result": "failed", "line": ""})
    return out


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the request log is the record
        return

    def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        owner: ScriptedJudgeServer = self.server.owner
        started = time.monotonic()
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = self.path.split("?", 1)[0].rstrip("/")
        wire = "anthropic" if path.endswith("/messages") else "openai" if path.endswith("/chat/completions") else ""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        if not wire or not isinstance(body, dict):
            self._send(404, {"error": {"message": f"no route {path}", "type": "not_found"}})
            return
        req = _parse_request(wire, body)
        in_tok = count_tokens(_request_text(body))
        status, out_tok = owner._answer(self, req, in_tok)
        if status < 0:  # already logged
            return
        owner._log(LoggedRequest(wire, req.claim_id, status, in_tok, out_tok, started, time.monotonic(), body,
                                 {k.lower(): v for k, v in self.headers.items()}, req.kind))


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 128
    owner: ScriptedJudgeServer


class ScriptedJudgeServer:
    def __init__(self, answerer: Callable[[ScriptedRequest], Answer | dict | str] | None = None, *,
                 model_echo: str | None = None, json_schema_supported: bool = True,
                 expected_api_key: str | None = None, default_delay_s: float = 0.0):
        self.answerer = answerer or demo_answerer
        self.json_schema_supported = json_schema_supported
        self.expected_api_key = expected_api_key
        self.default_delay_s = default_delay_s
        self.model_echo = model_echo
        self._queues: dict[str, deque[Answer]] = defaultdict(deque)
        self._log_entries: list[LoggedRequest] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    # ---- lifecycle --------------------------------------------------------------------------------------
    def __enter__(self) -> ScriptedJudgeServer:
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="scripted-judge", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()  # hung handlers give up
        assert self._httpd is not None
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(5)

    @property
    def port(self) -> int:
        assert self._httpd is not None, "use the server as a context manager"
        return self._httpd.server_address[1]

    @property
    def anthropic_url(self) -> str:  # the Anthropic SDK appends /v1/messages
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:  # the OpenAI SDK appends /chat/completions
        return f"http://127.0.0.1:{self.port}/v1"

    # ---- script and log ---------------------------------------------------------------------------------
    def script(self, claim_id: str, *answers: Answer) -> None:
        """Answers to the claim's first asks, in order."""
        with self._lock:
            self._queues[claim_id].extend(answers)

    def script_b(self, claim_id: str, *answers: Answer) -> None:
        """Answers to the claim's direction-B asks, in order."""
        with self._lock:
            self._queues[claim_id + "\x00direction_b"].extend(answers)

    def requests(self, kind: str | None = None) -> list[LoggedRequest]:
        """The request log; kind "verdict" or "direction_b" keeps that ask's requests only."""
        with self._lock:
            return [r for r in self._log_entries if kind is None or r.kind == kind]

    @property
    def count(self) -> int:
        return len(self.requests())

    @property
    def input_tokens(self) -> int:
        return sum(r.input_tokens for r in self.requests())

    @property
    def output_tokens(self) -> int:
        return sum(r.output_tokens for r in self.requests())

    def reset_log(self) -> None:
        with self._lock:
            self._log_entries.clear()

    def _log(self, entry: LoggedRequest) -> None:
        with self._lock:
            self._log_entries.append(entry)

    # ---- answering ----------------------------------------------------------------------------------------
    def _next_answer(self, req: ScriptedRequest) -> Answer:
        with self._lock:
            queue = self._queues.get(req.claim_id + ("\x00direction_b" if req.kind == "direction_b" else ""))
            if queue:
                return queue.popleft()
        got = self.answerer(req)
        return got if isinstance(got, Answer) else Answer(body=got)

    def _auth_ok(self, handler: _Handler, wire: str) -> str | None:
        if self.expected_api_key is None:
            return None
        # Anthropic's SDK sends x-api-key or (newer versions) a bearer token; OpenAI's a bearer token
        sent = handler.headers.get("x-api-key") or (handler.headers.get("authorization") or "").removeprefix("Bearer ")
        if sent == self.expected_api_key:
            return None
        # Deliberately hostile: echo the key sent, as a careless server might (the client must redact it).
        return f"invalid api key: {sent}"

    def _error(self, handler: _Handler, wire: str, status: int, kind: str, message: str,
               headers: dict[str, str] | None = None) -> None:
        if wire == "anthropic":
            payload = {"type": "error", "error": {"type": kind, "message": message}}
        else:
            payload = {"error": {"message": message, "type": kind, "param": None, "code": None}}
        # x-should-retry is left to the SDK's status policy (429/5xx retried)
        handler._send(status, payload, headers)

    def _answer(self, handler: _Handler, req: ScriptedRequest, in_tok: int) -> tuple[int, int]:
        wire = req.wire
        bad_key = self._auth_ok(handler, wire)
        if bad_key:
            kind = "authentication_error" if wire == "anthropic" else "invalid_request_error"
            self._error(handler, wire, 401, kind, bad_key)
            return 401, 0
        rf = req.body.get("response_format") if wire == "openai" else None
        if rf and rf.get("type") == "json_schema" and not self.json_schema_supported:
            self._error(handler, wire, 400, "invalid_request_error",
                        "response_format of type json_schema is not supported by this server")
            return 400, 0
        ans = self._next_answer(req)
        delay = ans.delay_s or self.default_delay_s
        if delay:
            self._stop.wait(delay)
        if ans.fault == "429":
            self._error(handler, wire, 429, "rate_limit_error", "rate limited (scripted)",
                        {"retry-after": f"{ans.retry_after_s:g}", "retry-after-ms": str(int(ans.retry_after_s * 1000))})
            return 429, 0
        if ans.fault == "500":
            self._error(handler, wire, 500, "api_error", "internal error (scripted)")
            return 500, 0
        if ans.fault == "hang":  # logged on arrival (status 0: never answered)
            self._log(LoggedRequest(wire, req.claim_id, 0, in_tok, 0, time.monotonic(), time.monotonic(), req.body,
                                    {k.lower(): v for k, v in handler.headers.items()}, req.kind))
            self._stop.wait(ans.hang_s)
            handler.close_connection = True
            return -1, 0
        body = ans.body if ans.body is not None else demo_answerer(req)
        if isinstance(body, dict) and wire == "openai" and rf and rf.get("type") == "json_schema":
            body = _conform(body, (rf.get("json_schema") or {}).get("schema") or {})
        text = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)
        quote = body.get("quote", "") if isinstance(body, dict) else ""
        stop = "end_turn" if wire == "anthropic" else "stop"
        if ans.fault == "truncated":
            text = text[: len(text) // 2]
            stop = "max_tokens" if wire == "anthropic" else "length"
            quote = ""
        elif ans.fault == "malformed":
            text = "Here is my verdict: {verdict: MATCH, quote: " + text[:40] + " (end)"
            quote = ""
        out_tok = count_tokens(text)
        model = self.model_echo or str(req.body.get("model", ""))
        if wire == "anthropic":
            blocks = _anthropic_blocks(text, quote, req)
            handler._send(200, {
                "id": f"msg_{uuid.uuid4().hex[:24]}", "type": "message", "role": "assistant", "model": model,
                "content": blocks, "stop_reason": stop, "stop_sequence": None,
                "usage": {"input_tokens": in_tok, "output_tokens": out_tok},
            })
        else:
            handler._send(200, {
                "id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": "chat.completion", "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": stop,
                             "logprobs": None}],
                "usage": {"prompt_tokens": in_tok, "completion_tokens": out_tok, "total_tokens": in_tok + out_tok},
            })
        return 200, out_tok


def _anthropic_blocks(text: str, quote: str, req: ScriptedRequest) -> list[dict[str, Any]]:
    """Text blocks as the API returns them with citations on: the cited span is a block of its own carrying a
    char_location citation into the document; the blocks' texts concatenate to the whole answer."""
    escaped = json.dumps(quote, ensure_ascii=False)[1:-1] if quote else ""
    start = req.page_text.find(quote) if quote else -1
    cut = text.find(escaped) if escaped else -1
    if not req.citations_enabled or start < 0 or cut < 0:
        return [{"type": "text", "text": text}]
    return [
        {"type": "text", "text": text[:cut]},
        {"type": "text", "text": escaped, "citations": [{
            "type": "char_location", "cited_text": quote, "document_index": 0, "document_title": "page text",
            "start_char_index": start, "end_char_index": start + len(quote),
        }]},
        {"type": "text", "text": text[cut + len(escaped):]},
    ]


# ---- the demo's honest scripted judge ---------------------------------------------------------------------

def _request_item(req: ScriptedRequest) -> Any:
    """The claim the request asks about, as a JudgeItem (the page text is the text the request carries)."""
    from claims_pipeline.judge.model import JudgeItem

    values = [{"type": t or "pct", "raw": raw} for raw, t in zip(req.figures, req.figure_types or [""] * len(req.figures))]
    return JudgeItem(id=req.claim_id or "?", scope=req.scope, line_no=req.line_no or 0, source_url=req.source_url,
                     claim_text=req.claim_text, values=values, page_text=req.page_text)


def _passages(page: str) -> list[tuple[int, int]]:
    """The page's sentences and table rows a quote may be (12 to 600 characters, stripped)."""
    from claims_pipeline.judge.evidence import segments

    out = []
    for lo, hi in segments(page):
        while lo < hi and page[lo].isspace():
            lo += 1
        while hi > lo and page[hi - 1].isspace():
            hi -= 1
        if 12 <= hi - lo <= 600:
            out.append((lo, hi))
    return out


def _supporting(item: Any, page: str) -> tuple[str, bool, Any] | None:
    """The passage of the page carrying the claim's figure that best speaks of the claim's subject:
    (passage, strong hit, SubjectCheck), or None when the figure is not on the page."""
    from claims_pipeline.judge.evidence import best_subject, claim_figure_spans

    if not item.values:
        return None
    value = item.values[0]
    best: tuple[tuple, tuple[str, bool, Any]] | None = None
    for lo, hi in _passages(page):
        text = page[lo:hi]
        for strong in (True, False):
            spans = claim_figure_spans(value, text, strong_only=strong)
            if spans:
                _, check = best_subject(item, text, spans, value)
                rank = (check.ok, check.foreign, strong, len(check.shared))
                if best is None or rank > best[0]:
                    best = (rank, (text, strong, check))
                break
    return best[1] if best else None


def _mismatching(item: Any, page: str) -> tuple[str, str] | None:
    """A passage stating another figure of the claim's kind for the claim's subject: (passage, figure)."""
    from claims_pipeline.judge.evidence import best_subject, other_figure_spans

    if not item.values:
        return None
    value = item.values[0]
    for lo, hi in _passages(page):
        text = page[lo:hi]
        others = other_figure_spans(value, text, item.values)
        for a, b, fig in others:
            _, check = best_subject(item, text, [(a, b)], value)
            if check.ok:
                return text, fig
    return None


def _answer(base: dict[str, Any], verdict: str, claimed: str, says: str, quote: str, confidence: float, note: str,
            a: tuple[str, str], b: tuple[str, str], cls: str) -> dict[str, Any]:
    return {**base, "verdict": verdict, "claimed": claimed, "source_says": says, "quote": quote,
            "confidence": confidence, "note": f"{DEMO_NOTE}: {note}",
            "direction_a": {"result": a[0], "line": a[1]}, "direction_b": {"result": b[0], "line": b[1]},
            "verification_class": cls}


def demo_answerer(req: ScriptedRequest) -> dict[str, Any]:
    """An honest scripted answer from the page text in the request (no model), read with the project's readers:
    MATCH quoting the passage that carries the claim's figure about the claim's subject (PARTIAL when the
    figure is there only weakly, or the page is in another language so its subject cannot be read by words);
    MISMATCH quoting a passage with another figure of the claim's kind for its subject; else NOT_FOUND. The
    direction-B ask is answered by looking for a competing figure for the same subject."""
    if req.kind == "direction_b":
        return demo_direction_b(req)
    page = req.page_text
    base = {"id": req.claim_id, "scope": req.scope, "line_no": req.line_no or 0, "source_url": req.source_url}
    raw = req.figures[0] if req.figures else ""
    if not page.strip():
        return _answer(base, "SOURCE_UNAVAILABLE", raw, "", "", 0.5, "empty page text",
                       ("failed", "no page text to look in"), ("failed", "no page text to look in"), "flagged-no-source")
    item = _request_item(req)
    found = _supporting(item, page)
    if found is not None:
        quote, strong, check = found
        if check.ok and strong:
            return _answer(base, "MATCH", raw, raw, quote, 0.7, "the page states the figure in a passage about "
                           "the claim's subject", ("passed", "the figure is on the page, read as a number"),
                           ("passed", "the passage speaks of the claim's subject"), "confirmed")
        if check.ok or (check.foreign and strong):
            why = ("the page is in another language: its subject is not read by the scripted judge" if not check.ok
                   else "the figure is on the page only without its unit or precision")
            return _answer(base, "PARTIAL", raw, raw, quote, 0.5, why, ("passed", "the figure is on the page"),
                           ("failed", why), "flagged-judgment-call")
    other = _mismatching(item, page)
    if other is not None and raw:
        quote, figure = other
        return _answer(base, "MISMATCH", raw, figure, quote, 0.4, "the page gives another figure of the claim's kind "
                       "for its subject", ("failed", "the claim's figure is not on the page for its subject"),
                       ("failed", "the page gives another figure for the same subject"), "corrected")
    if found is not None:
        return _answer(base, "INDETERMINATE", raw, "", "", 0.3, "the figure is on the page, but not in a passage "
                       "about the claim's subject", ("failed", "the figure's passage is about another thing"),
                       ("failed", "not checked"), "flagged-judgment-call")
    return _answer(base, "NOT_FOUND", raw, "", "", 0.5, "the figure is not on the page in any form the readers know",
                   ("failed", "the figure is not on the page"), ("passed", "no other figure for the same thing"),
                   "flagged-unsupported")


def demo_direction_b(req: ScriptedRequest) -> dict[str, Any]:
    """The direction-B ask, answered honestly: refuted when the page states a competing figure of the claim's
    kind for its subject outside the passage that carries the claim's figure."""
    from claims_pipeline.judge.evidence import competing

    item = _request_item(req)
    found = _supporting(item, req.page_text)
    rivals = competing(item, req.page_text, found[0] if found else "")
    if rivals:
        return {"id": req.claim_id, "refuted": True, "quote": rivals[0].passage, "source_says": rivals[0].figure,
                "line": f"{DEMO_NOTE}: the page states another figure for the same subject"}
    return {"id": req.claim_id, "refuted": False, "quote": "", "source_says": "",
            "line": f"{DEMO_NOTE}: no other figure of the claim's kind for its subject on the page"}


# ---- wiring the demo: the scripted judge as a configured provider -------------------------------------------

DEMO_MODEL = SCRIPTED_MODEL  # the model name every demo verdict carries (no price: cost 0)
DEMO_KEY_ENV = "CLAIMS_PIPELINE_DEMO_JUDGE_KEY"
DEMO_ENV = {DEMO_KEY_ENV: "demo-no-secret"}  # pass as make_provider(..., environ=DEMO_ENV)


def demo_judge_settings(srv: ScriptedJudgeServer, base: Any = None, *, provider: str = "anthropic") -> Any:
    """JudgeSettings (from `base`, default JudgeSettings()) pointing a real SDK at this scripted server."""
    from claims_pipeline.config.settings import JudgeSettings

    url = srv.anthropic_url if provider == "anthropic" else srv.openai_url
    return (base or JudgeSettings()).model_copy(update={
        "provider": provider, "base_url": url, "model": DEMO_MODEL, "api_key_env": DEMO_KEY_ENV,
    })
