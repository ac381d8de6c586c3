"""EXAM++ answer verification by the LLM: extract an answer, then ask per gold answer whether it is as correct.

Grade 1 if any gold answer is verified (logits: the gold with the highest probability of the best label
decides). An unanswerable or ill-formed extracted answer is 0 without asking; an item without gold answers is
unparseable (deterministic: asking again cannot help).
"""

from __future__ import annotations

from collections.abc import Sequence

from autograde.grading.backend import Failure, Generation, LabelScores, failed
from autograde.grading.base import GradeRequest, GradeResult
from autograde.grading.llm_grader import FLOWS, LLMGrader
from autograde.grading.parse import is_ill_formed, is_unanswerable


def grade_verification(grader: LLMGrader, requests: list[GradeRequest]) -> list[GradeResult]:
    """Grade ``requests`` with a verification prompt (one result per request, in order; never raises)."""
    assert grader.answer_prompt is not None
    fitted = [grader.model_input(grader.answer_prompt, r) for r in requests]
    answers = grader.generate([t for t, _ in fitted], grader.options.answer_max_new_tokens)
    results: list[GradeResult | None] = [None] * len(requests)
    checks: list[tuple[int, str]] = []
    check_inputs: list[str] = []
    for i, (req, ans) in enumerate(zip(requests, answers, strict=True)):
        if isinstance(ans, Failure):
            results[i] = failed(ans)
            continue
        text = ans.text.strip()
        if not req.gold_answers:
            results[i] = GradeResult(grade=None, parse_status="unparseable", answer=text, raw=ans.text,
                                     error="the item has no gold answers to verify against")
            continue
        if is_unanswerable(text, fuzzy=grader.options.fuzzy_unanswerable) or is_ill_formed(text):
            results[i] = GradeResult(grade=0, parse_status="ok", answer=text, raw=ans.text,
                                     extra={"parse": "unanswerable or ill-formed answer; not verified"})
            continue
        for gold in req.gold_answers:
            checks.append((i, gold))
            check_inputs.append(grader.model_input(grader.prompt, req, answer=text, gold=gold)[0])
    outs: Sequence[LabelScores | Generation | Failure]
    if grader.scoring == "logits":
        outs = grader.label_scores(check_inputs)
    else:
        outs = grader.generate(check_inputs, grader.options.max_new_tokens)
    per_item: dict[int, list[tuple[str, GradeResult]]] = {}
    for (i, gold), out in zip(checks, outs, strict=True):
        per_item.setdefault(i, []).append((gold, grader.result(requests[i], out, {})))
    for i, pairs in per_item.items():
        answer_text = answers[i].text.strip()  # type: ignore[union-attr]
        ok = [(g, r) for g, r in pairs if r.parse_status == "ok"]
        if not ok:
            worst = next((r for _, r in pairs if r.parse_status == "failed"), pairs[0][1])
            worst.answer = answer_text
            results[i] = worst
            continue
        gold, best = max(ok, key=lambda gr: (gr[1].grade or 0, (gr[1].grade_probs or {}).get(gr[1].answer or "", 0.0)))
        results[i] = GradeResult(
            grade=best.grade, parse_status="ok", grade_probs=best.grade_probs, expected_grade=best.expected_grade,
            label_mass=best.label_mass, answer=answer_text, raw=best.raw,
            extra={"verified_against": gold, "verification": best.answer},
        )
    return [r if r is not None else failed(Failure("internal: no result")) for r in results]


FLOWS["verification"] = grade_verification
