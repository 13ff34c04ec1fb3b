"""``sciera eval leaderboard``: every pair of answering pipelines battles on the questions
they share, judged in both orders; Bradley–Terry ratings with bootstrap intervals.

    board = build_leaderboard(["results/pqa"], judge, out=Path("results/board"))

Systems are the pipelines with answers in the given results directories (named
``pipeline``, or ``dir/pipeline`` when several directories are given); each contributes its
first complete repeat. Two systems battle on a question when both answered it and the
question text is the same in both runs. Every battle goes through the
:class:`~sciera.eval.judges.pairwise.PairwiseJudge` and is appended to
``OUT/battles.jsonl`` at once (the runner's fsync'd :class:`~sciera.eval.resultlog.QueryLog`),
keyed by the question and a digest of both answers, so an interrupted leaderboard resumes
and a changed answer is judged again.

Two ratings per system when the runs carry rubric coverage (a ``rubric_coverage`` judge
with ``points`` in its details): ``direct`` (the pairwise verdicts alone) and ``ensemble``
(ResearchQA: a side's coverage points plus 4 x its direct preference, 1 for a win, 0.5
for a tie; the larger total wins, equal totals tie). The judge's position bias and the
agreement of its two orders are reported beside the table, with the judge model.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

from sciera.errors import ScieraError
from sciera.eval.bradley_terry import Rating, rate
from sciera.eval.judges.base import mean_cost
from sciera.eval.judges.pairwise import Battle, PairwiseJudge, cut_words, position_bias
from sciera.eval.resultlog import QueryLog
from sciera.progress import Deadline

BATTLES_FILE = "battles.jsonl"
PREFERENCE_WEIGHT = 4.0  # ResearchQA's ensemble: coverage points + 4 x direct preference
Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class System:
    name: str
    root: str
    pipeline: str
    repeat: int
    questions: Mapping[str, str]  # qid -> question text
    answers: Mapping[str, str]  # qid -> answer text (non-empty)
    coverage: Mapping[str, float] = field(default_factory=dict)  # qid -> coverage points


def load_systems(roots: Sequence[str | Path]) -> list[System]:
    """The answering pipelines of ``roots`` (their first complete repeat each)."""
    from sciera.eval.aggregate import complete_repeats
    from sciera.eval.runstore import load_results

    out = []
    for root in roots:
        results = load_results(root)
        queries = results.dataset["queries"]
        for pipeline in results.pipelines:
            repeats = complete_repeats(results, pipeline)
            if not repeats:
                continue
            recs = results.records[pipeline][repeats[0]]
            answers = {
                q: r["answer"]["text"]
                for q, r in recs.items()
                if r.get("answer") and r["answer"].get("text", "").strip()
            }
            if not answers:
                continue
            coverage = {
                q: float(r["judges"]["rubric_coverage"]["details"]["points"])
                for q, r in recs.items()
                if "points" in r.get("judges", {}).get("rubric_coverage", {}).get("details", {})
            }
            name = pipeline if len(roots) == 1 else f"{Path(root).name}/{pipeline}"
            out.append(System(name, str(root), pipeline, repeats[0], queries, answers, coverage))
    names = [s.name for s in out]
    if len(set(names)) != len(names):
        raise ScieraError(f"two systems share a name ({names}); give directories other names")
    if len(out) < 2:
        raise ScieraError(
            f"{', '.join(map(str, roots))}: a leaderboard needs two answering pipelines with a "
            f"complete run, found {len(out)}"
        )
    return out


@dataclass(frozen=True, slots=True)
class Match:
    """One battle to judge: ``x`` against ``y`` (names in sorted order) on ``qid``."""

    qid: str
    question: str
    x: str
    y: str
    answer_x: str
    answer_y: str
    max_words: int | None

    @property
    def key(self) -> str:
        cut = [cut_words(a, self.max_words) for a in (self.answer_x, self.answer_y)]
        digest = hashlib.sha256("\x00".join([self.question, *cut]).encode()).hexdigest()
        return f"{self.qid}|{self.x}|{self.y}|{digest[:16]}"


def matches(systems: Sequence[System], max_words: int | None) -> list[Match]:
    """Every pair of systems on every question both answered (same question text)."""
    out = []
    for a, b in combinations(sorted(systems, key=lambda s: s.name), 2):
        for qid in sorted(set(a.answers) & set(b.answers)):
            if a.questions.get(qid) != b.questions.get(qid):
                continue
            q = a.questions[qid]
            out.append(Match(qid, q, a.name, b.name, a.answers[qid], b.answers[qid], max_words))
    return out


def judge_matches(
    todo: Sequence[Match],
    judge: PairwiseJudge,
    log: QueryLog,
    *,
    deadline: Deadline | None = None,
    progress: Progress | None = None,
) -> Iterator[tuple[Match, Battle]]:
    """Each match with its battle: from the log, else judged now (until ``deadline``
    passes; matches left then are not yielded)."""
    for i, m in enumerate(todo, start=1):
        if m.key in log:
            battle = Battle.from_dict(log.records[m.key]["battle"])
        else:
            if deadline is not None and deadline.passed():
                return
            start = time.perf_counter()
            battle = judge.battle(m.question, m.answer_x, m.answer_y)
            seconds = time.perf_counter() - start
            row = {"key": m.key, "qid": m.qid, "x": m.x, "y": m.y, "seconds": seconds}
            log.append({**row, "battle": battle.to_dict()})
        if progress is not None:
            progress(i, len(todo))
        yield m, battle


def ensemble_score(battle: Battle, cov_x: float, cov_y: float) -> float:
    """x's outcome under ResearchQA's ensemble: coverage points + 4 x direct preference."""
    pref = battle.score_x
    assert pref is not None
    total_x = cov_x + PREFERENCE_WEIGHT * pref
    total_y = cov_y + PREFERENCE_WEIGHT * (1.0 - pref)
    return 1.0 if total_x > total_y else 0.0 if total_x < total_y else 0.5


@dataclass
class Leaderboard:
    systems: list[str]
    judge_model: str
    prompt_version: str
    max_words: int | None
    matches: int
    judged: int
    failed: int
    questions: int
    ratings: dict[str, list[Rating]]  # "direct" (and "ensemble") -> best first
    judge_stats: dict[str, float]
    complete: bool
    bootstrap: int
    seed: int
    sanity: dict[str, Any] | None = None  # sciera eval judge-sanity's summary

    def to_dict(self) -> dict[str, Any]:
        return {
            "systems": self.systems,
            "judge_model": self.judge_model,
            "prompt_version": self.prompt_version,
            "max_words": self.max_words,
            "matches": self.matches,
            "judged": self.judged,
            "failed": self.failed,
            "questions": self.questions,
            "complete": self.complete,
            "bootstrap": self.bootstrap,
            "seed": self.seed,
            "judge": self.judge_stats,
            "sanity": self.sanity,
            "ratings": {
                kind: [
                    {
                        "system": r.system,
                        "rating": r.rating,
                        "low": r.low,
                        "high": r.high,
                        "battles": r.battles,
                        "wins": r.wins,
                        "win_rate": r.win_rate,
                    }
                    for r in rows
                ]
                for kind, rows in self.ratings.items()
            },
        }


def build_leaderboard(
    roots: Sequence[str | Path],
    judge: PairwiseJudge,
    out: Path,
    *,
    bootstrap: int = 1000,
    seed: int = 0,
    limit_minutes: float | None = None,
    progress: Progress | None = None,
    plots: bool = True,
    sanity: Path | None = None,
) -> Leaderboard:
    """Judge every match not yet in ``out/battles.jsonl``, fit, and write the tables."""
    systems = load_systems(roots)
    by_name = {s.name: s for s in systems}
    todo = matches(systems, judge.max_words)
    if not todo:
        raise ScieraError("no question was answered by two systems: nothing to battle on")
    deadline = Deadline(limit_minutes)
    with QueryLog.open(out / BATTLES_FILE, key="key") as log:
        judged = list(judge_matches(todo, judge, log, deadline=deadline, progress=progress))
        # lines logged before battles were timed have no seconds: the mean is over the rest
        lines = [(log.records[m.key], b) for m, b in judged]
        cost = mean_cost(
            ((line["seconds"], b.prompt_tokens) for line, b in lines if "seconds" in line),
            "battle",
        )
    ok = [(m, b) for m, b in judged if b.score_x is not None]
    direct: dict[str, list[tuple[str, str, float]]] = {}
    ensemble: dict[str, list[tuple[str, str, float]]] = {}
    for m, b in ok:
        direct.setdefault(m.qid, []).append((m.x, m.y, b.score_x or 0.0))
        cov_x, cov_y = by_name[m.x].coverage.get(m.qid), by_name[m.y].coverage.get(m.qid)
        if cov_x is not None and cov_y is not None:
            ensemble.setdefault(m.qid, []).append((m.x, m.y, ensemble_score(b, cov_x, cov_y)))
    names = [s.name for s in systems]
    ratings = {"direct": rate(direct, names, bootstrap=bootstrap, seed=seed)}
    if ensemble:
        ratings["ensemble"] = rate(ensemble, names, bootstrap=bootstrap, seed=seed)
    board = Leaderboard(
        systems=names,
        judge_model=judge.llm.model_id,
        prompt_version=judge.prompt_version,
        max_words=judge.max_words,
        matches=len(todo),
        judged=len(judged),
        failed=len(judged) - len(ok),
        questions=len(direct),
        ratings=ratings,
        judge_stats={**position_bias(b for _, b in ok), **cost},
        complete=len(judged) == len(todo),
        bootstrap=bootstrap,
        seed=seed,
        sanity=read_sanity(sanity),
    )
    write_leaderboard(board, out, plots)
    return board


def read_sanity(path: Path | None) -> dict[str, Any] | None:
    if path is None:
        return None
    if not path.is_file():
        raise ScieraError(f"{path}: no such file (write it with `sciera eval judge-sanity`)")
    return json.loads(path.read_text(encoding="utf-8"))


def sanity_lines(board: Leaderboard) -> list[str]:
    """The judge's sanity-set accuracy beside the table, or a warning that it is unchecked."""
    s = (board.sanity or {}).get("pairwise")
    if s is None:
        return [
            "\n**The judge is unchecked**: no sanity-set accuracy was given (`sciera eval "
            "judge-sanity`, then `--sanity OUT/sanity.json`); read the ratings with care."
        ]
    model = s.get("model_id")
    same = "" if model == board.judge_model else f" (measured with {model}, not this judge)"
    kinds = ", ".join(f"{k} {v['accuracy']:.2f}" for k, v in s["by_kind"].items())
    bias = s["position_bias"]["first_wins"]
    return [
        f"\nJudge sanity{same}: right on {s['harmful_accuracy']:.2f} of {s['harmful_n']} "
        f"reference-vs-corruption battles ({kinds}); position bias {bias:.2f}."
    ]


def markdown(board: Leaderboard) -> str:
    lines = [
        f"# Leaderboard ({board.questions} questions, {board.judged - board.failed} battles, "
        f"judge {board.judge_model})\n",
    ]
    if not board.complete:
        lines.append(
            f"**Partial**: {board.judged} of {board.matches} battles judged; rerun to go on.\n"
        )
    for kind, rows in board.ratings.items():
        lines += [
            f"## {kind}\n",
            "| rank | system | rating | 95% interval | battles | win rate |",
            "|---:|---|---:|---|---:|---:|",
        ]
        for i, r in enumerate(rows, start=1):
            lines.append(
                f"| {i} | {r.system} | {r.rating:.0f} | {r.low:.0f} – {r.high:.0f} | "
                f"{r.battles} | {r.win_rate:.3f} |"
            )
        lines.append("")
    s = board.judge_stats
    lines.append(
        f"Judge `{board.judge_model}` ({board.prompt_version}), answers cut to "
        f"{board.max_words or 'no limit on'} words, both orders per battle (a disagreement "
        f"is a tie): the first-shown answer won {s['first_wins']:.2f} of "
        f"{s['decisive_verdicts']:.0f} decisive verdicts (0.5 is unbiased); the two orders "
        f"agreed in {s['order_agreement']:.2f} of battles; ties {s['ties']:.2f}; failed "
        f"battles {board.failed}.{_cost_text(s)} Ratings: Bradley–Terry on the Elo scale, "
        f"{board.bootstrap} bootstrap resamples of the questions (seed {board.seed})."
    )
    lines += sanity_lines(board)
    return "\n".join(lines) + "\n"


def _cost_text(stats: Mapping[str, float]) -> str:
    if "seconds_per_battle" not in stats:
        return ""
    return (
        f" Cost: {stats['seconds_per_battle']:.1f} s and "
        f"{stats['prompt_tokens_per_battle']:.0f} prompt tokens per battle (both orders; "
        f"{stats['timed_battles']:.0f} battles timed)."
    )


def write_leaderboard(board: Leaderboard, out: Path, plots: bool = True) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = {"md": out / "leaderboard.md", "json": out / "leaderboard.json"}
    paths["md"].write_text(markdown(board), encoding="utf-8")
    paths["json"].write_text(json.dumps(board.to_dict(), indent=1) + "\n", encoding="utf-8")
    if plots:
        paths["png"] = out / "leaderboard.png"
        _plot(board, paths["png"])
    return paths


def _plot(board: Leaderboard, path: Path) -> None:
    from sciera.eval.plots import pyplot

    plt = pyplot()
    kinds = list(board.ratings)
    fig, axes = plt.subplots(
        1, len(kinds), figsize=(5 * len(kinds), 0.5 + 0.45 * len(board.systems))
    )
    for ax, kind in zip([axes] if len(kinds) == 1 else axes, kinds, strict=True):
        rows = board.ratings[kind][::-1]
        y = range(len(rows))
        ax.errorbar(
            [r.rating for r in rows],
            list(y),
            xerr=[[r.rating - r.low for r in rows], [r.high - r.rating for r in rows]],
            fmt="o",
            capsize=3,
        )
        ax.set_yticks(list(y), [r.system for r in rows])
        ax.set_xlabel("Bradley–Terry rating (Elo scale)")
        ax.set_title(kind)
        ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
