"""Deterministic stand-ins for unit tests (never for integration tests).

``ScriptedLLM`` implements the LLM protocol from a script of rules: each rule
matches the prompt (all message contents joined with newlines) by substring,
regex or predicate, and gives text replies (consumed in order, the last one
repeating), a JSON object, a choice distribution, or an exception to raise.
Every call is recorded.

    from fakes import ScriptedLLM  # tests/ is on sys.path via tests/conftest.py

    llm = (
        ScriptedLLM()
        .on("capital of France", "Paris")
        .on(re.compile(r"Score \\(0-10\\)"), ["7", "garbage"])
        .on("Is it relevant", probs={"yes": 0.3, "no": 0.1})
        .on("intent", {"topic": "x", "intent": "mechanism"})
    )
    llm.complete([Message("user", "What is the capital of France?")]).text  # "Paris"
    llm.calls[-1].method  # "complete"
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sciera.llm.base import ChoiceProbs, Completion, JSONResult, Message, ParseFailure
from sciera.llm.parsing import parse_choice, parse_json

Matcher = str | re.Pattern[str] | Callable[[str], bool]


@dataclass(frozen=True)
class Call:
    """One recorded call: method name, the messages and the parameters."""

    method: str
    messages: tuple[Message, ...]
    params: Mapping[str, Any]

    @property
    def prompt(self) -> str:
        return prompt_text(self.messages)


@dataclass
class Rule:
    match: Matcher
    replies: list[str] = field(default_factory=list)
    probs: Mapping[str, float] | None = None
    raises: BaseException | None = None
    used: int = 0

    def matches(self, prompt: str) -> bool:
        if isinstance(self.match, str):
            return self.match in prompt
        if isinstance(self.match, re.Pattern):
            return self.match.search(prompt) is not None
        return bool(self.match(prompt))

    def next_reply(self) -> str:
        reply = self.replies[min(self.used, len(self.replies) - 1)]
        self.used += 1
        return reply


def prompt_text(messages: Sequence[Message]) -> str:
    return "\n".join(m.content for m in messages)


class ScriptedLLM:
    """A scripted, deterministic LLM; tokens are whitespace-separated words."""

    def __init__(
        self,
        *,
        default: str | None = None,
        default_probs: Mapping[str, float] | None = None,
        model_id: str = "scripted:test",
    ) -> None:
        self._model_id = model_id
        self._rules: list[Rule] = []
        self._default = default
        self._default_probs = default_probs
        self._lock = threading.Lock()
        self.calls: list[Call] = []

    @property
    def model_id(self) -> str:
        return self._model_id

    def on(
        self,
        match: Matcher,
        reply: str | Sequence[str] | Mapping[str, Any] | None = None,
        *,
        probs: Mapping[str, float] | None = None,
        raises: BaseException | None = None,
    ) -> ScriptedLLM:
        """Add a rule (first matching rule wins); returns self for chaining."""
        if isinstance(reply, Mapping):
            replies = [json.dumps(reply)]
        elif isinstance(reply, str):
            replies = [reply]
        else:
            replies = list(reply or [])
        if not replies and probs is None and raises is None:
            raise ValueError("a rule needs a reply, probs or raises")
        self._rules.append(Rule(match, replies, probs, raises))
        return self

    def calls_to(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method]

    def _find(self, method: str, messages: Sequence[Message], params: Mapping[str, Any]) -> Rule:
        prompt = prompt_text(messages)
        with self._lock:
            self.calls.append(Call(method, tuple(messages), dict(params)))
        for rule in self._rules:  # matched outside the lock: a predicate may block
            wanted = rule.replies or rule.raises or (method == "choice_logprobs" and rule.probs)
            if wanted and rule.matches(prompt):
                if rule.raises is not None:
                    raise rule.raises
                return rule
        if method == "choice_logprobs" and self._default_probs is not None:
            return Rule("", probs=self._default_probs)
        if self._default is not None:
            return Rule("", [self._default])
        raise LookupError(f"ScriptedLLM: no rule for {method} with prompt {prompt[:300]!r}")

    def _reply(self, rule: Rule) -> str:
        with self._lock:
            return rule.next_reply()

    def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        stop: Sequence[str] | None = None,
    ) -> Completion:
        params = {"max_tokens": max_tokens, "temperature": temperature, "stop": stop}
        text = self._reply(self._find("complete", messages, params))
        return self._completion(messages, text, max_tokens, stop)

    def complete_json(
        self, messages: Sequence[Message], schema: Mapping[str, Any], *, max_tokens: int = 512
    ) -> JSONResult:
        params = {"max_tokens": max_tokens, "schema": schema}
        text = self._reply(self._find("complete_json", messages, params))
        completion = self._completion(messages, text, max_tokens, None)
        parsed = parse_json(completion.text, schema)
        if isinstance(parsed, ParseFailure):
            return JSONResult(None, completion, parsed)
        return JSONResult(parsed, completion)

    def choice_logprobs(self, messages: Sequence[Message], choices: Sequence[str]) -> ChoiceProbs:
        rule = self._find("choice_logprobs", messages, {"choices": list(choices)})
        n_prompt = len(prompt_text(messages).split())
        if rule.probs is None:  # like a server without logprobs: one-hot on the answer
            answer = parse_choice(self._reply(rule), choices)
            hot = {c: float(c == answer) for c in choices}
            return ChoiceProbs(hot, prompt_tokens=n_prompt, raw_mass=0.0)
        raw = {c: float(rule.probs.get(c, 0.0)) for c in choices}
        mass = sum(raw.values())
        probs = {c: (p / mass if mass > 0 else 0.0) for c, p in raw.items()}
        return ChoiceProbs(probs, prompt_tokens=n_prompt, raw_mass=mass)

    @staticmethod
    def _completion(
        messages: Sequence[Message], text: str, max_tokens: int, stop: Sequence[str] | None
    ) -> Completion:
        for s in stop or ():
            if s and s in text:
                text = text[: text.index(s)]
        words = text.split()
        finish = "stop"
        if len(words) > max_tokens:
            text, finish = " ".join(words[:max_tokens]), "length"
        return Completion(
            text=text,
            prompt_tokens=len(prompt_text(messages).split()),
            completion_tokens=min(len(words), max_tokens),
            finish_reason=finish,
        )
