"""LLM backend for any OpenAI-compatible chat server (vLLM, Ollama, llama.cpp, hosted APIs).

Bounded like every sciera LLM call: a timeout per request, retries with
exponential backoff and jitter on HTTP 429/5xx, timeouts and connection errors
(honoring ``Retry-After``), and at most ``concurrency`` requests in flight.

Structured output: ``complete_json`` asks for ``response_format`` type
``json_schema``; a server that rejects it (HTTP 422/501, or an error reply
naming ``response_format``; such replies are not retried) is asked for
``json_object`` with the schema (llama-cpp-python's server), then plain
``json_object``, then nothing (prompting only). The schema is always stated in
the prompt too and the reply always goes through :func:`parse_json`. The mode
that worked is remembered per instance.

Choice probabilities: one token is generated with ``top_logprobs=20``; top
tokens are stripped of whitespace and mapped to the choices (case-insensitively
when that is unambiguous), so choices should be single tokens ("yes"/"no",
"0".."9", "A".."E"). If the server returns no logprobs, or none of the choices
is among the top tokens, the answer is generated and read with
:func:`parse_choice`: a one-hot, uncalibrated distribution with ``raw_mass=0``
(all zeros when the answer names no choice).
"""

from __future__ import annotations

import email.utils
import json
import logging
import os
import random
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from sciera.errors import ScieraError
from sciera.llm.base import ChoiceProbs, Completion, JSONResult, Message
from sciera.llm.choices import choice_distribution, one_hot
from sciera.llm.parsing import json_result, parse_choice
from sciera.llm.schema import grammar_schema

logger = logging.getLogger(__name__)

JSON_MODES = ("json_schema", "json_object+schema", "json_object", "prompt")
_UNSUPPORTED = frozenset({422, 501})
_MAX_RETRY_AFTER = 60.0
_TOP_LOGPROBS = 20


class HTTPStatusError(ScieraError):
    """A non-retryable HTTP error status from the server."""

    def __init__(self, url: str, status: int, body: str) -> None:
        self.url, self.status, self.body = url, status, body
        super().__init__(f"{url}: HTTP {status}: {body[:300]}")


class UnsupportedFeatureError(HTTPStatusError):
    """The server rejected an optional request field (response_format, logprobs)."""


def _rejects(status: int, body: str, feature: str | None) -> bool:
    """Whether an error reply rejects ``feature`` (names it, or is 422/501) -- not retried."""
    return feature is not None and (status in _UNSUPPORTED or feature in body)


def _retryable(status: int) -> bool:
    return status == 429 or status >= 500


def _retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    return min(max(seconds, 0.0), _MAX_RETRY_AFTER)


def _with_schema(messages: Sequence[Message], schema: Mapping[str, Any]) -> list[Message]:
    note = "Reply with a single JSON object that matches this JSON schema:\n" + json.dumps(schema)
    out = list(messages)
    if out and out[-1].role == "user":
        out[-1] = Message("user", f"{out[-1].content}\n\n{note}")
    else:
        out.append(Message("user", note))
    return out


def _response_format(mode: str, schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """The request's ``response_format``; servers get the schema without string length
    limits (llama.cpp servers unroll them into grammars that crash; the reply is validated
    against the full schema here)."""
    schema = grammar_schema(schema)
    if mode == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema}}
    if mode == "json_object+schema":
        return {"type": "json_object", "schema": schema}
    if mode == "json_object":
        return {"type": "json_object"}
    return None


def _top_tokens(data: Mapping[str, Any]) -> list[tuple[str, float]] | None:
    """(token, logprob) candidates for the first generated token, or None if absent."""
    try:
        logprobs = data["choices"][0].get("logprobs")
        content = logprobs.get("content") if isinstance(logprobs, Mapping) else None
        if content:  # chat format
            first = content[0]
            pairs = [(t["token"], t["logprob"]) for t in first.get("top_logprobs") or []]
            return [*pairs, (first["token"], first["logprob"])]
        legacy = logprobs.get("top_logprobs") if isinstance(logprobs, Mapping) else None
        if legacy:  # completions format: a list of {token: logprob}
            return list(legacy[0].items())
    except (KeyError, IndexError, TypeError, AttributeError):
        logger.warning("unreadable logprobs in the server reply: %.300s", json.dumps(data))
    return None


class OpenAICompatLLM:
    """Chat completions over HTTP; ``base_url`` like ``http://127.0.0.1:8000/v1``."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = 120.0,
        retries: int = 3,
        concurrency: int = 4,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        seed: int | None = None,
    ) -> None:
        if not base_url:
            raise ScieraError("the openai LLM backend needs a base_url (SCIERA_LLM__BASE_URL)")
        if concurrency < 1 or retries < 0 or timeout <= 0:
            raise ValueError("need concurrency >= 1, retries >= 0 and timeout > 0")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout, self.retries = float(timeout), int(retries)
        self.backoff, self.max_backoff, self.seed = backoff, max_backoff, seed
        key = api_key or os.environ.get("SCIERA_LLM__API_KEY") or os.environ.get("OPENAI_API_KEY")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._client = httpx.Client(
            timeout=httpx.Timeout(self.timeout),
            headers=headers,
            limits=httpx.Limits(max_connections=concurrency),
        )
        self._slots = threading.BoundedSemaphore(concurrency)
        self._lock = threading.Lock()
        self._json_mode = 0
        self._logprobs: bool | None = None  # None: not known yet

    @property
    def model_id(self) -> str:
        return f"openai:{self.base_url}:{self.model}"

    @property
    def json_mode(self) -> str:
        """The structured-output mode in use (see JSON_MODES)."""
        return JSON_MODES[self._json_mode]

    def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        stop: Sequence[str] | None = None,
    ) -> Completion:
        payload = self._payload(messages, max_tokens, temperature)
        if stop:
            payload["stop"] = list(stop)
        start = time.perf_counter()
        data = self._post(payload)
        return self._completion(data, time.perf_counter() - start)

    def complete_json(
        self, messages: Sequence[Message], schema: Mapping[str, Any], *, max_tokens: int = 512
    ) -> JSONResult:
        payload = self._payload(_with_schema(messages, schema), max_tokens, 0.0)
        start = time.perf_counter()
        while True:
            tried = self._json_mode
            response_format = _response_format(JSON_MODES[tried], schema)
            if response_format is not None:
                payload["response_format"] = response_format
            else:
                payload.pop("response_format", None)
            try:
                data = self._post(payload, "response_format" if response_format else None)
                break
            except UnsupportedFeatureError as exc:
                with self._lock:
                    self._json_mode = max(self._json_mode, tried + 1)
                logger.info(
                    "%s rejected response_format %s (HTTP %d); using %s",
                    self.base_url,
                    JSON_MODES[tried],
                    exc.status,
                    JSON_MODES[self._json_mode],
                )
        completion = self._completion(data, time.perf_counter() - start)
        return json_result(completion, schema)

    def choice_logprobs(self, messages: Sequence[Message], choices: Sequence[str]) -> ChoiceProbs:
        if not choices:
            raise ValueError("choice_logprobs needs at least one choice")
        start = time.perf_counter()
        if self._logprobs is not False:
            payload = self._payload(messages, 1, 0.0)
            payload.update(logprobs=True, top_logprobs=_TOP_LOGPROBS)
            try:
                data = self._post(payload, "logprobs")
                top = _top_tokens(data)
            except UnsupportedFeatureError:
                top = None
            if top is None:
                self._logprobs = False
                logger.warning(
                    "%s returns no logprobs: choice scores are one-hot and uncalibrated",
                    self.base_url,
                )
            else:
                self._logprobs = True
                probs, mass = choice_distribution(top, choices)
                if mass > 0:
                    usage = data.get("usage") or {}
                    return ChoiceProbs(
                        probs,
                        prompt_tokens=int(usage.get("prompt_tokens", 0)),
                        seconds=time.perf_counter() - start,
                        raw_mass=mass,
                    )
                logger.debug("no choice among the top tokens; generating the answer instead")
        completion = self.complete(messages, max_tokens=16, temperature=0.0)
        answer = parse_choice(completion.text, choices)
        return ChoiceProbs(
            one_hot(answer if isinstance(answer, str) else None, choices),
            prompt_tokens=completion.prompt_tokens,
            seconds=time.perf_counter() - start,
            raw_mass=0.0,
        )

    def _payload(
        self, messages: Sequence[Message], max_tokens: int, temperature: float
    ) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "max_tokens": int(max_tokens),
            "temperature": float(temperature),
        }
        if self.seed is not None:
            payload["seed"] = self.seed
        return payload

    def _completion(self, data: Mapping[str, Any], seconds: float) -> Completion:
        try:
            choice = data["choices"][0]
            usage = data.get("usage") or {}
            return Completion(
                text=choice["message"].get("content") or "",
                prompt_tokens=int(usage.get("prompt_tokens", 0)),
                completion_tokens=int(usage.get("completion_tokens", 0)),
                seconds=seconds,
                finish_reason=choice.get("finish_reason") or "",
            )
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise ScieraError(
                f"{self.base_url}/chat/completions: unexpected response shape ({exc!r}): "
                f"{json.dumps(data)[:300]}"
            ) from exc

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return retry_after
        ceiling = min(self.max_backoff, self.backoff * 2**attempt)
        return ceiling / 2 + random.uniform(0, ceiling / 2)

    def _post(self, payload: Mapping[str, Any], feature: str | None = None) -> dict[str, Any]:
        """POST with retries; an error naming the optional ``feature`` raises at once."""
        url = f"{self.base_url}/chat/completions"
        attempts = self.retries + 1
        for attempt in range(attempts):
            retry_after = None
            try:
                with self._slots:
                    response = self._client.post(url, json=payload)
            except httpx.TimeoutException:
                problem = f"no reply within the {self.timeout:g} s timeout"
            except httpx.TransportError as exc:
                problem = f"connection failed ({type(exc).__name__}: {exc})"
            else:
                if response.is_success:
                    try:
                        return response.json()
                    except ValueError as exc:
                        raise ScieraError(
                            f"{url}: reply is not JSON: {response.text[:300]}"
                        ) from exc
                status, body = response.status_code, response.text
                if _rejects(status, body, feature):
                    raise UnsupportedFeatureError(url, status, body)
                if not _retryable(status):
                    raise HTTPStatusError(url, status, body)
                problem = f"HTTP {response.status_code}: {response.text[:300]}"
                retry_after = _retry_after(response.headers.get("retry-after"))
            if attempt + 1 < attempts:
                delay = self._delay(attempt, retry_after)
                logger.warning(
                    "%s: %s; retry %d of %d in %.2f s",
                    url,
                    problem,
                    attempt + 1,
                    self.retries,
                    delay,
                )
                time.sleep(delay)
        raise ScieraError(f"{url}: {problem} (gave up after {attempts} attempts)")

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> OpenAICompatLLM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
