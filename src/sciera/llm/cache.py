"""A persistent response cache in front of any LLM backend, with usage accounting.

Key: sha256 over the model id, the method, the messages and every parameter
that changes the reply (max_tokens, temperature, stop, schema, choices), as
canonical JSON. Values are the results as JSON in one SQLite table (WAL mode,
busy timeout), so threads and processes can share a cache file.

Only deterministic calls are cached: ``complete`` with temperature 0 (unless
``cache_sampled=True``), and every ``complete_json`` / ``choice_logprobs`` call
(both are greedy by contract). Errors raised by the backend (timeouts, HTTP
errors) are never cached. A JSON reply that did not parse *is* cached -- the
same prompt at temperature 0 gives the same reply, so asking again would only
pay twice -- but what is stored is the raw completion, and a cached failure is
re-parsed on every hit, so a better parser rescues old failures for free.

Concurrent identical calls in one process wait for the first one instead of
asking the model twice. On a hit the result has ``cached=True``, keeps the
token counts of the original reply and reports the lookup time as ``seconds``;
the tracker counts a hit as a call with zero tokens.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from sciera.errors import ScieraError
from sciera.llm.accounting import UsageTracker
from sciera.llm.base import LLM, ChoiceProbs, Completion, JSONResult, Message, Usage
from sciera.llm.parsing import json_result
from sciera.sqlite import retry_locked

logger = logging.getLogger(__name__)
CACHE_FORMAT = 1  # bump when the stored layout changes: old entries are then ignored
T = TypeVar("T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model_id TEXT NOT NULL,
    method TEXT NOT NULL,
    value TEXT NOT NULL,
    created REAL NOT NULL
)
"""


OPEN_TIMEOUT = 30.0  # seconds to keep retrying a cache file another process is setting up


def _setup(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA busy_timeout = 30000")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute(_SCHEMA)


@dataclass(frozen=True, slots=True)
class _Codec(Generic[T]):
    encode: Callable[[T], dict[str, Any]]
    decode: Callable[[dict[str, Any], float], T]
    tokens: Callable[[T], tuple[int, int]]
    failed: Callable[[T], bool]


def _completion_dict(c: Completion) -> dict[str, Any]:
    return {
        "text": c.text,
        "prompt_tokens": c.prompt_tokens,
        "completion_tokens": c.completion_tokens,
        "seconds": c.seconds,
        "finish_reason": c.finish_reason,
    }


def _completion_from(d: dict[str, Any], seconds: float) -> Completion:
    return Completion(**{**d, "seconds": seconds, "cached": True})


_COMPLETE: _Codec[Completion] = _Codec(
    encode=_completion_dict,
    decode=_completion_from,
    tokens=lambda c: (c.prompt_tokens, c.completion_tokens),
    failed=lambda c: False,
)


def _json_codec(schema: Mapping[str, Any]) -> _Codec[JSONResult]:
    def encode(r: JSONResult) -> dict[str, Any]:
        value = dict(r.value) if r.value is not None else None
        return {"completion": _completion_dict(r.completion), "value": value}

    def decode(d: dict[str, Any], seconds: float) -> JSONResult:
        completion = _completion_from(d["completion"], seconds)
        if d["value"] is not None:
            return JSONResult(d["value"], completion)
        return json_result(completion, schema)  # re-parse a cached failure

    return _Codec(
        encode,
        decode,
        tokens=lambda r: (r.completion.prompt_tokens, r.completion.completion_tokens),
        failed=lambda r: not r.ok,
    )


_CHOICES: _Codec[ChoiceProbs] = _Codec(
    encode=lambda p: {
        "probs": dict(p.probs),
        "prompt_tokens": p.prompt_tokens,
        "raw_mass": p.raw_mass,
    },
    decode=lambda d, seconds: ChoiceProbs(**d, seconds=seconds, cached=True),
    tokens=lambda p: (p.prompt_tokens, 0),
    failed=lambda p: sum(p.probs.values()) == 0,
)


class CachedLLM:
    """Implements :class:`~sciera.llm.base.LLM` by delegating to ``inner`` through the cache."""

    def __init__(
        self,
        inner: LLM,
        cache_path: Path | str,
        *,
        enabled: bool = True,
        tracker: UsageTracker | None = None,
        cache_sampled: bool = False,
    ) -> None:
        self.inner = inner
        self.path = Path(cache_path)
        self.enabled = enabled
        self.tracker = tracker if tracker is not None else UsageTracker()
        self.cache_sampled = cache_sampled
        self._lock = threading.Lock()
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []
        self._inflight: dict[str, list[Any]] = {}
        self._hits = 0
        self._misses = 0
        if enabled:
            self._conn()  # create the file and table now: fail early on a bad path

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def hits(self) -> int:
        return self._hits

    @property
    def misses(self) -> int:
        return self._misses

    def usage(self) -> Usage:
        return self.tracker.snapshot()

    def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        stop: Sequence[str] | None = None,
    ) -> Completion:
        params = {
            "max_tokens": int(max_tokens),
            "temperature": float(temperature),
            "stop": list(stop) if stop else None,
        }
        cacheable = temperature == 0 or self.cache_sampled
        return self._call(
            "complete",
            messages,
            params,
            cacheable,
            lambda: self.inner.complete(
                messages, max_tokens=max_tokens, temperature=temperature, stop=stop
            ),
            _COMPLETE,
        )

    def complete_json(
        self, messages: Sequence[Message], schema: Mapping[str, Any], *, max_tokens: int = 512
    ) -> JSONResult:
        params = {"max_tokens": int(max_tokens), "schema": schema}
        return self._call(
            "complete_json",
            messages,
            params,
            True,
            lambda: self.inner.complete_json(messages, schema, max_tokens=max_tokens),
            _json_codec(schema),
        )

    def choice_logprobs(self, messages: Sequence[Message], choices: Sequence[str]) -> ChoiceProbs:
        return self._call(
            "choice_logprobs",
            messages,
            {"choices": list(choices)},
            True,
            lambda: self.inner.choice_logprobs(messages, choices),
            _CHOICES,
        )

    def key(self, method: str, messages: Sequence[Message], params: Mapping[str, Any]) -> str:
        """The cache key of one call (exposed for tests and tools)."""
        material = {
            "format": CACHE_FORMAT,
            "model": self.model_id,
            "method": method,
            "messages": [[m.role, m.content] for m in messages],
            "params": params,
        }
        canonical = json.dumps(
            material, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str
        )
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def _call(
        self,
        method: str,
        messages: Sequence[Message],
        params: Mapping[str, Any],
        cacheable: bool,
        compute: Callable[[], T],
        codec: _Codec[T],
    ) -> T:
        start = time.perf_counter()
        if not (self.enabled and cacheable):
            return self._compute(compute, codec, start, cached=None)
        key = self.key(method, messages, params)
        with self._single_flight(key):
            stored = self._get(key)
            if stored is not None:
                seconds = time.perf_counter() - start
                result = codec.decode(stored, seconds)
                with self._lock:
                    self._hits += 1
                self.tracker.record(None, 0, 0, seconds, cached=True, failed=codec.failed(result))
                return result
            result = self._compute(compute, codec, start, cached=False)
            self._put(key, method, codec.encode(result))
            return result

    def _compute(
        self, compute: Callable[[], T], codec: _Codec[T], start: float, cached: bool | None
    ) -> T:
        if cached is False:
            with self._lock:
                self._misses += 1
        try:
            result = compute()
        except Exception:
            self.tracker.record(None, 0, 0, time.perf_counter() - start, cached, failed=True)
            raise
        prompt_tokens, completion_tokens = codec.tokens(result)
        seconds = time.perf_counter() - start
        self.tracker.record(
            None, prompt_tokens, completion_tokens, seconds, cached, codec.failed(result)
        )
        return result

    @contextmanager
    def _single_flight(self, key: str) -> Iterator[None]:
        with self._lock:
            entry = self._inflight.setdefault(key, [threading.Lock(), 0])
            entry[1] += 1
        try:
            with entry[0]:
                yield
        finally:
            with self._lock:
                entry[1] -= 1
                if entry[1] == 0:
                    del self._inflight[key]

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                self.path, timeout=30.0, isolation_level=None, check_same_thread=False
            )
            try:
                retry_locked(lambda: _setup(conn), OPEN_TIMEOUT)
            except sqlite3.Error:
                conn.close()
                raise
        except (OSError, sqlite3.Error, UnicodeDecodeError) as exc:  # junk in a damaged file
            detail = " ".join(str(exc).split())
            raise ScieraError(f"{self.path}: cannot open the LLM response cache: {detail}") from exc
        self._local.conn = conn
        with self._lock:
            self._conns.append(conn)
        return conn

    def _get(self, key: str) -> dict[str, Any] | None:
        """The stored value, or None (also when the entry cannot be read: a miss)."""
        try:
            sql = "SELECT value FROM responses WHERE key = ?"
            row = self._conn().execute(sql, (key,)).fetchone()
            return json.loads(row[0]) if row else None
        except (sqlite3.Error, ValueError) as exc:
            logger.warning(
                "%s: cache entry %s unreadable, asking the model: %s", self.path, key, exc
            )
            return None

    def _put(self, key: str, method: str, value: dict[str, Any]) -> None:
        try:
            self._conn().execute(
                "INSERT OR REPLACE INTO responses (key, model_id, method, value, created) "
                "VALUES (?, ?, ?, ?, ?)",
                (key, self.model_id, method, json.dumps(value, ensure_ascii=False), time.time()),
            )
        except sqlite3.Error as exc:  # the cache is an optimization: keep the result
            logger.warning("%s: could not store a response: %s", self.path, exc)

    def __len__(self) -> int:
        """Number of stored responses (0 when disabled)."""
        if not self.enabled:
            return 0
        return int(self._conn().execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        """Close this instance's database connections (the inner LLM is not closed)."""
        with self._lock:
            conns, self._conns = self._conns, []
        for conn in conns:
            conn.close()
        self._local = threading.local()

    def __enter__(self) -> CachedLLM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
