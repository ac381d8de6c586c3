"""The one registry of grading prompt classes, under versioned config names.

A prompt class is data, not code: a template with named fields, a label set with a grade per label and
the kind of answer it expects. Config names are ``Name`` (the default version) or ``Name@version``.

>>> p = get_prompt("QuestionSelfRatedUnanswerablePromptWithChoices")
>>> p.config_name, p.kind, list(p.labels)
('QuestionSelfRatedUnanswerablePromptWithChoices@v1', 'rating', ['0', '1', '2', '3', '4', '5'])
>>> from autograde.grading.base import GradeRequest
>>> req = GradeRequest("q1", "when did rock n roll begin?", "p1", "Rock began in the 1950s.", "q1/x", "question",
...                    "When did rock begin?")
>>> render(p, req).splitlines()[-2:]
['Question: When did rock begin?', 'Context: Rock began in the 1950s.']

Template fields: ``{question}`` / ``{nugget}`` (the test-bank item text), ``{query}`` (the query text),
``{context}`` (the passage), ``{gold}`` (a gold answer) and ``{answer}`` (an extracted answer). Other braces
are left alone, so templates may contain JSON.

Test-bank generation prompts (Phase 1, kind ``generation``) live in the same registry. Their fields are
``{query_text}`` (TREC DL style), ``{query_title}`` and ``{query_subtopic}`` (TREC CAR style), ``{n_items}``
(the number of items asked for) and ``{instruction}`` (the prompt's JSON format instruction, appended as
published); a failed answer is asked again with the prompt's ``repair_template`` (fields ``{prompt}``, the
first prompt as sent, ``{answer}``, the unusable answer, and ``{problem}``, what was wrong).

>>> g = get_prompt("QuestionGenerationDL")
>>> text = render_generation(g, query_text="when did rock n roll begin?", n_items=10)
>>> text.split(". ")[1][:40]
'Generate 10 concise insightful questions'
>>> text.splitlines()[-2]
'{ "questions" : {question_text_1, question_text_2, ... } }'

Nugget evaluation prompts (TREC RAG 2024 style, autograde's own wording): kind ``importance`` labels a nugget
``vital`` or ``okay`` for its query (fields ``{query}``, ``{nugget}``; no passage), kind ``assignment`` labels how
a whole generated answer (``{context}``) covers a nugget: ``support``, ``partial_support`` or ``not_support``.

>>> a = get_prompt("NuggetAssignment")
>>> a.kind, list(a.labels), a.max_grade
('assignment', ['support', 'partial_support', 'not_support'], 2)
>>> list(get_prompt("NuggetImportance").labels)
['vital', 'okay']

Versions:

- ``v1`` (default): the words of the prompts exactly as published in the seeds (Rubric-Grading Workbench
  paper, Table 2; EXAM++ paper, Table 2 and Appendix A). The seeds are text extracted from PDFs, so their line
  breaks are not reliable; ``v1`` puts each published line/bullet on its own line. ``Sun_few@v1`` is the one
  reconstruction: the seed describes it only as "Prompt Sun with the same few shot examples as FaggioliB_few".
- ``wb1``: the strings of the original workbench code (TREMA-UNH/rubric-grading-workbench,
  ``exam_pp/test_bank_prompts.py`` at 48bbaa8, MIT licence), whitespace included, which produced the published
  FLAN-T5-large grades and autograded qrels. Use it to reproduce them; it differs from the papers in small ways
  (e.g. ``Query:`` instead of ``Question:`` in the direct prompts, a line break inside "query" in HELM).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from autograde.core.errors import InvalidValueError, UnknownNameError
from autograde.core.ids import content_hash
from autograde.grading.nugget_labels import ASSIGNMENT_GRADES, IMPORTANCE_GRADES
from autograde.grading.spec import PromptOrder

if TYPE_CHECKING:
    from autograde.grading.base import GradeRequest

PromptKind = Literal["rating", "extraction", "verification", "direct", "generation", "importance", "assignment"]
ItemKind = Literal["question", "nugget", "query"]
AnswerCheck = Literal["labels", "unanswerable", "answer_key"]

KINDS: tuple[str, ...] = ("rating", "extraction", "verification", "direct", "generation", "importance", "assignment")
ITEM_KINDS: tuple[str, ...] = ("question", "nugget", "query")
ANSWER_CHECKS: tuple[str, ...] = ("labels", "unanswerable", "answer_key")
FIELDS: tuple[str, ...] = ("question", "nugget", "query", "context", "gold", "answer")
GENERATION_FIELDS: tuple[str, ...] = ("query_text", "query_title", "query_subtopic", "n_items", "instruction")
"""Fields of test-bank generation templates."""
REPAIR_FIELDS: tuple[str, ...] = ("prompt", "answer", "problem")
"""Fields of a generation prompt's repair template: the first prompt, the unusable answer (cut to
:data:`REPAIR_ANSWER_CHARS`) and what was wrong with it."""
REPAIR_ANSWER_CHARS = 1000
FIELD_RE = re.compile(r"\{(\w+)\}")
PROMPT_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*$")
"""A prompt class name (also its config name: a letter first)."""
VERSION_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")

RATING_0_5 = {str(i): i for i in range(6)}
YES_NO = {"yes": 1, "no": 0}
RATING_0_2 = {str(i): i for i in range(3)}
RATING_0_3 = {str(i): i for i in range(4)}


@dataclass(frozen=True)
class PromptClass:
    """One versioned grading prompt.

    ``labels`` maps each allowed answer (label) to its grade; it is empty for extraction prompts, whose grade
    comes from ``answer_check``: ``unanswerable`` (1 unless the answer says the question cannot be answered)
    or ``answer_key`` (1 if the answer matches a gold answer). Verification prompts are scored over their
    labels but first need an answer, extracted with ``answer_prompt``.
    """

    name: str
    version: str
    kind: PromptKind
    item_kind: ItemKind
    template: str
    labels: Mapping[str, int] = field(default_factory=dict)
    passage_first_template: str | None = None
    answer_check: AnswerCheck = "labels"
    answer_prompt: str | None = None
    source: str = ""
    exact: bool = True
    description: str = ""
    instruction: str | None = None
    """Generation prompts: the output format instruction, filled into ``{instruction}``."""
    repair_template: str | None = None
    """Generation prompts: the prompt sent after an unusable answer (fields ``{prompt}``, ``{problem}``)."""
    answer_prefix: str | None = None
    """Prompts whose answer ends in a fixed form (UMBRELA: ``##final score: N``): the text before the label. Logits
    scoring appends it to the model input, so the next token is the label; generate mode reads the label after
    its last occurrence (:func:`autograde.grading.parse.parse_prefixed`)."""
    system_message: str | None = None
    """The system message the prompt's own tool sends with it (UMBRELA's GPT judge: :data:`UMBRELA_SYSTEM_MESSAGE`);
    the ``openai`` backend sends it unless ``options.system_prompt`` is set (the backend's identity records it)."""

    @property
    def config_name(self) -> str:
        """``Name@version``, the unambiguous config name."""
        return f"{self.name}@{self.version}"

    @property
    def max_grade(self) -> int:
        """Largest grade this prompt can give (1 for extraction prompts)."""
        return max(self.labels.values()) if self.labels else 1

    @property
    def json_field(self) -> str:
        """Generation prompts: the JSON key the items are asked under (``questions`` or ``nuggets``)."""
        return "nuggets" if self.item_kind == "nugget" else "questions"

    @property
    def scorable_by_logits(self) -> bool:
        """Whether ``scoring: logits`` applies (a label set to read the next-token distribution over)."""
        return bool(self.labels) and self.kind != "extraction"

    def template_for(self, order: PromptOrder = "question_first") -> str:
        """The template for ``order``; passage-first raises if this prompt has no such variant."""
        if order == "question_first":
            return self.template
        if order == "passage_first":
            if self.passage_first_template is None:
                raise InvalidValueError(
                    f"prompt {self.config_name} has no passage_first variant; use prompt_order: question_first "
                    "or define passage_first_template for it"
                )
            return self.passage_first_template
        raise InvalidValueError(f"unknown prompt order {order!r}; valid: question_first, passage_first")

    def digest(self) -> str:
        """Content hash of everything that determines the prompt's inputs and grades (for cache keys)."""
        content: dict[str, Any] = {
            "name": self.name,
            "version": self.version,
            "kind": self.kind,
            "item_kind": self.item_kind,
            "template": self.template,
            "passage_first_template": self.passage_first_template,
            "labels": dict(self.labels),
            "answer_check": self.answer_check,
            "answer_prompt": self.answer_prompt,
        }
        if self.kind == "generation":  # only generation prompts have these (grading digests stay as they were)
            content["instruction"] = self.instruction
            content["repair_template"] = self.repair_template
        if self.answer_prefix is not None:  # only prompts with an answer form have it (other digests unchanged)
            content["answer_prefix"] = self.answer_prefix
        return content_hash(content, length=16)

    def label_set_text(self) -> str:
        """The label set for listings: ``0..5``, ``yes/no`` or the answer check of extraction prompts."""
        if self.kind == "generation":
            return f"{self.item_kind}s (JSON list)"
        if not self.labels:
            return f"free text ({self.answer_check}: 0/1)"
        return "/".join(f"{label}={grade}" if str(grade) != label else label for label, grade in self.labels.items())


# --------------------------------------------------------------------------------------------------------------
# v1: the texts of the seeds.

_SRC_RUBRIC_T2 = "Dietz, SIGIR 2024 (Rubric-Grading Workbench), Table 2"
_SRC_EXAM_T2 = "Farzi and Dietz, 2024 (EXAM++), Table 2"
_SRC_EXAM_APPX = "Farzi and Dietz, 2024 (EXAM++), Appendix A"

QUESTION_SELF_RATED_INSTRUCTION = (
    "Can the question be answered based on the available context? choose one:\n"
    "- 5: The answer is highly relevant, complete, and accurate.\n"
    "- 4: The answer is mostly relevant and complete but may have minor gaps or inaccuracies.\n"
    "- 3: The answer is partially relevant and complete, with noticeable gaps or inaccuracies.\n"
    "- 2: The answer has limited relevance and completeness, with significant gaps or inaccuracies.\n"
    "- 1: The answer is minimally relevant or complete, with substantial shortcomings.\n"
    "- 0: The answer is not relevant or complete at all.\n"
)

NUGGET_SELF_RATED_INSTRUCTION = (
    "Given the context, evaluate the coverage of the specified key fact (nugget). Use this scale:\n"
    "- 5: Detailed, clear coverage.\n"
    "- 4: Sufficient coverage, minor omissions.\n"
    "- 3: Mentioned, some inaccuracies or lacks detail.\n"
    "- 2: Briefly mentioned, significant omissions or inaccuracies.\n"
    "- 1: Minimally mentioned, largely inaccurate.\n"
    "- 0: Not mentioned at all.\n"
)

QA_INSTRUCTION = "provide a complete and concise answer to the question based on the context."
NUGGET_EXTRACTION_INSTRUCTION = (
    "Extract the passage from the text that best relates to the key fact (nugget), ensuring relevance and clarity."
)
VERIFICATION_TEMPLATE = (
    'For the question "{question}" the correct answer is "{gold}". '
    'Is "{answer}" an equally correct response to this question? Answer yes or no.'
)

FAGB_INSTRUCTION = "Instruction: Indicate if the passage is relevant for the question. Respond with 'Yes' or 'No'."
SUN_INSTRUCTION = (
    "Instruction: Given a passage and a query, predict whether the passage includes an answer to the query by "
    'producing either "Yes" or "No".'
)
THOMAS_INSTRUCTION = (
    "Instruction: You are a search quality rater evaluating the relevance of passages. Given a query and a "
    "passages, you must provide a score on an integer scale of 0 to 2 with the following meanings:\n"
    "2 = highly relevant, very helpful for this query\n"
    "1 = relevant, may be partly helpful but might contain other irrelevant content\n"
    "0 = not relevant, should never be shown for this query\n"
)

# The TREC DL few-shot examples of FaggioliB_few (Farzi and Dietz, 2024, EXAM++, Appendix A), as (passage, question, answer).
DL_FEW_SHOT_EXAMPLES: tuple[tuple[str, str, str], ...] = (
    (
        "Its 25 drops per ml, you guys are all wrong. If it is water, the standard was changed 15 - 20 years ago to "
        "make 20 drops = 1mL. The viscosity of most things is temperature dependent, so this would be at room "
        "temperature. Hope this helps.",
        "how many eye drops per ml",
        "Yes",
    ),
    (
        "RE: How many eyedrops are there in a 10 ml bottle of Cosopt? My Kaiser pharmacy insists that 2 bottles "
        "should last me 100 days but I run out way before that time when I am using 4 drops per day. In the past "
        "other pharmacies have given me 3 10-ml bottles for 100 days. E: How many eyedrops are there in a 10 ml "
        "bottle of Cosopt? My Kaiser pharmacy insists that 2 bottles should last me 100 days but I run out way "
        "before that time when I am using 4 drops per day.",
        "how many eye drops per ml",
        "No",
    ),
    (
        "You can transfer money to your checking account from other Wells Fargo. accounts through Wells Fargo "
        "Mobile Banking with the mobile app, online, at any. Wells Fargo ATM, or at a Wells Fargo branch. "
        "1 Money in — deposits.",
        "can you open a wells fargo account online",
        "No",
    ),
    (
        "You can open a Wells Fargo banking account from your home or even online. It is really easy to do, "
        "provided you have all of the appropriate documentation. Wells Fargo has so many bank account options that "
        "you will be sure to find one that works for you. They offer free checking accounts with free online "
        "banking.",
        "can you open a wells fargo account online",
        "Yes",
    ),
)
DL_FEW_SHOT = "".join(f"Passage: {p}\nQuestion: {q}\nAnswer: {a}\n\n" for p, q, a in DL_FEW_SHOT_EXAMPLES)


def _v1_prompts() -> list[PromptClass]:
    qsr = QUESTION_SELF_RATED_INSTRUCTION
    nsr = NUGGET_SELF_RATED_INSTRUCTION
    return [
        PromptClass(
            "QuestionSelfRatedUnanswerablePromptWithChoices", "v1", "rating", "question",
            qsr + "Question: {question}\nContext: {context}",
            RATING_0_5,
            passage_first_template=qsr + "Context: {context}\nQuestion: {question}",
            source=f"{_SRC_RUBRIC_T2} (= {_SRC_EXAM_T2}, self-rating answerability prompt)",
            description="self-rated answerability of an exam question, 0-5",
        ),
        PromptClass(
            "NuggetSelfRatedPrompt", "v1", "rating", "nugget",
            nsr + "Key Fact: {nugget}\nContext: {context}",
            RATING_0_5,
            passage_first_template=nsr + "Context: {context}\nKey Fact: {nugget}",
            source=_SRC_RUBRIC_T2,
            description="self-rated coverage of a nugget (key fact), 0-5",
        ),
        PromptClass(
            "QuestionCompleteConciseUnanswerablePromptWithChoices", "v1", "extraction", "question",
            QA_INSTRUCTION + " Question: {question}\nContext: {context}",
            passage_first_template=QA_INSTRUCTION + " Context: {context}\nQuestion: {question}",
            answer_check="unanswerable",
            source=_SRC_RUBRIC_T2,
            description="answer extraction for manual verification; grade 1 unless the answer says unanswerable",
        ),
        PromptClass(
            "NuggetExtractionPrompt", "v1", "extraction", "nugget",
            NUGGET_EXTRACTION_INSTRUCTION + " Key Fact: {nugget}\nContext: {context}",
            passage_first_template=NUGGET_EXTRACTION_INSTRUCTION + " Context: {context}\nKey Fact: {nugget}",
            answer_check="unanswerable",
            source=_SRC_RUBRIC_T2,
            description="nugget mention extraction for manual verification; grade 1 unless unanswerable",
        ),
        PromptClass(
            "QuestionCompleteConcisePromptWithAnswerKey2", "v1", "extraction", "question",
            QA_INSTRUCTION + " Question: {question}\nContext: {context}",
            passage_first_template=QA_INSTRUCTION + " Context: {context}\nQuestion: {question}",
            answer_check="answer_key",
            source=f"{_SRC_EXAM_T2} (question answering prompt)",
            description="EXAM++ question answering; grade 1 if the answer matches the answer key (stemmed, fuzzy)",
        ),
        PromptClass(
            "QuestionCompleteConcisePromptWithT5VerifiedAnswerKey2", "v1", "verification", "question",
            VERIFICATION_TEMPLATE,
            YES_NO,
            passage_first_template=VERIFICATION_TEMPLATE,
            answer_prompt="QuestionCompleteConcisePromptWithAnswerKey2@v1",
            source=f"{_SRC_EXAM_T2} (optional answer verification prompt)",
            description="EXAM++ LLM answer verification: extract an answer, ask whether it equals a gold answer",
        ),
        PromptClass(
            "FagB", "v1", "direct", "query",
            FAGB_INSTRUCTION + "\n\nQuestion: {query}\nPassage: {context}\nAnswer:",
            YES_NO,
            passage_first_template=FAGB_INSTRUCTION + "\n\nPassage: {context}\nQuestion: {query}\nAnswer:",
            source=f"{_SRC_EXAM_APPX} (FaggioliB)",
            description="direct relevance (Faggioli et al.), yes/no",
        ),
        PromptClass(
            "FagB_few", "v1", "direct", "query",
            FAGB_INSTRUCTION + "\n\n" + DL_FEW_SHOT + "Question: {query}\nPassage: {context}\nAnswer:",
            YES_NO,
            passage_first_template=FAGB_INSTRUCTION + "\n\n" + DL_FEW_SHOT
            + "Passage: {context}\nQuestion: {query}\nAnswer:",
            source=f"{_SRC_EXAM_APPX} (FaggioliB_few)",
            description="FagB with four TREC DL few-shot examples, yes/no",
        ),
        PromptClass(
            "HELM", "v1", "direct", "query",
            "Instruction: Does the passage answer the query?\nRespond with 'Yes' or 'No'. "
            "Question: {query} Passage: {context}\nAnswer:",
            YES_NO,
            passage_first_template="Instruction: Does the passage answer the query?\nRespond with 'Yes' or 'No'. "
            "Passage: {context} Question: {query}\nAnswer:",
            source=f"{_SRC_EXAM_APPX} (HELM)",
            description="direct relevance (HELM), yes/no",
        ),
        PromptClass(
            "Sun", "v1", "direct", "query",
            SUN_INSTRUCTION + "\nQuestion: {query} Passage: {context}\nAnswer:",
            YES_NO,
            passage_first_template=SUN_INSTRUCTION + "\nPassage: {context} Question: {query}\nAnswer:",
            source=f"{_SRC_EXAM_APPX} (Sun)",
            description="direct relevance (Sun et al.), yes/no",
        ),
        PromptClass(
            "Sun_few", "v1", "direct", "query",
            SUN_INSTRUCTION + "\n\n" + DL_FEW_SHOT + "Question: {query} Passage: {context}\nAnswer:",
            YES_NO,
            passage_first_template=SUN_INSTRUCTION + "\n\n" + DL_FEW_SHOT
            + "Passage: {context} Question: {query}\nAnswer:",
            source=f"{_SRC_EXAM_APPX}: RECONSTRUCTED from 'Prompt Sun with the same few shot examples as "
            "FaggioliB_few' (Sun's instruction and final lines, FaggioliB_few's examples)",
            exact=False,
            description="Sun with the TREC DL few-shot examples of FagB_few, yes/no",
        ),
        PromptClass(
            "Thomas", "v1", "direct", "query",
            THOMAS_INSTRUCTION + "\nQuestion: {query} Passage: {context}\nAnswer:",
            RATING_0_2,
            passage_first_template=THOMAS_INSTRUCTION + "\nPassage: {context} Question: {query}\nAnswer:",
            source=f"{_SRC_EXAM_APPX} (Thomas, the abridged prompt)",
            description="direct relevance (Thomas et al., abridged), 0-2",
        ),
    ]


# --------------------------------------------------------------------------------------------------------------
# wb1: the strings of the original workbench code (for reproducing its published grades).

_SRC_WB = "TREMA-UNH/rubric-grading-workbench exam_pp/test_bank_prompts.py @48bbaa8 (MIT)"

_WB_QSR_PRETEXT = """Can the question be answered based on the available context? choose one:
        - 5: The answer is highly relevant, complete, and accurate.
        - 4: The answer is mostly relevant and complete but may have minor gaps or inaccuracies.
        - 3: The answer is partially relevant and complete, with noticeable gaps or inaccuracies.
        - 2: The answer has limited relevance and completeness, with significant gaps or inaccuracies.
        - 1: The answer is minimally relevant or complete, with substantial shortcomings.
        - 0: The answer is not relevant or complete at all.
        """

_WB_NSR_PRETEXT = """Given the context, evaluate the coverage of the specified key fact (nugget). Use this scale:
        - 5: Detailed, clear coverage.
        - 4: Sufficient coverage, minor omissions.
        - 3: Mentioned, some inaccuracies or lacks detail.
        - 2: Briefly mentioned, significant omissions or inaccuracies.
        - 1: Minimally mentioned, largely inaccurate.
        - 0: Not mentioned at all.
        """

_WB_FAGB_FEW = """Instruction: Indicate if the passage is relevant for the question. Respond with 'Yes' or 'No'.

Passage: Its 25 drops per ml, you guys are all wrong. If it is water, the standard was changed 15 - 20 years ago to make 20 drops = 1mL. The viscosity of most things is temperature dependent, so this would be at room temperature. Hope this helps.
Question: how many eye drops per ml 
Answer: Yes 

Passage: RE: How many eyedrops are there in a 10 ml bottle of Cosopt? My Kaiser pharmacy insists that 2 bottles should last me 100 days but I run out way before that time when I am using 4 
drops per day.In the past other pharmacies have given me 3 10-ml bottles for 100 days.E: How many eyedrops are there in a 10 ml bottle of Cosopt? My Kaiser pharmacy insists that 2 bottles 
should last me 100 days but I run out way before that time when I am using 4 drops per day. 
Question: how many eye drops per ml 
Answer: No 

Passage: : You can transfer money to your checking account from other Wells Fargo. accounts through Wells Fargo Mobile Banking with the mobile app, online, at any. Wells Fargo ATM, or at a 
Wells Fargo branch. 1 Money in — deposits. 
Question: can you open a wells fargo account online 
Answer: No 

Passage: You can open a Wells Fargo banking account from your home or even online. It is really easy to do, provided you have all of the appropriate documentation. Wells Fargo has so many b
ank account options that you will be sure to find one that works for you. They offer free checking accounts with free online banking. 
Question: can you open a wells fargo account online 
Answer: Yes

Passage: {context}
Question: {query}
Answer:
"""  # noqa: W291 (trailing spaces are part of the original prompt)

_WB_SUN_FEW = """Instruction: Given a passage and a query, predict whether the passage includes an answer to the query by producing either "Yes" or "No".

Passage: Its 25 drops per ml, you guys are all wrong. If it is water, the standard was changed 15 - 20 years ago to make 20 drops = 1mL. The viscosity of most things is temperature dependent, so this would be at room temperature. Hope this helps.
Query: how many eye drops per ml
Does the passage answer the query?
Answer: Yes

Passage: RE: How many eyedrops are there in a 10 ml bottle of Cosopt? My Kaiser pharmacy insists that 2 bottles should last me 100 days but I run out way before that time when I am using 4 drops per day.In the past other pharmacies have given me 3 10-ml bottles for 100 days.E: How many eyedrops are there in a 10 ml bottle of Cosopt? My Kaiser pharmacy insists that 2 bottles should last me 100 days but I run out way before that time when I am using 4 drops per day.
Query: how many eye drops per ml
Does the passage answer the query?
Answer: No

Passage: : You can transfer money to your checking account from other Wells Fargo. accounts through Wells Fargo Mobile Banking with the mobile app, online, at any. Wells Fargo ATM, or at a Wells Fargo branch. 1 Money in — deposits.
Query: can you open a wells fargo account online
Does the passage answer the query?
Answer: No

Passage: You can open a Wells Fargo banking account from your home or even online. It is really easy to do, provided you have all of the appropriate documentation. Wells Fargo has so many bank account options that you will be sure to find one that works for you. They offer free checking accounts with free online banking. 
Query: can you open a wells fargo account online
Does the passage answer the query?
Answer: Yes

Passage: {context}
Query: {query}

Does the passage answer the query?
Answer:
"""  # noqa: W291

_WB_THOMAS = """Instruction: You are a search quality rater evaluating the relevance of passages. Given a query and a passage, you must provide a score on an integer scale of 0 to 2 with the following meanings:
2 = highly relevant, very helpful for this query
1 = relevant, may be partly helpful but might contain other irrelevant content
0 = not relevant, should never be shown for this query

Query: {query}
Passage: {context}
Answer:
"""


def _wb1_prompts() -> list[PromptClass]:
    def wb(name: str, kind: PromptKind, item: ItemKind, template: str, labels: Mapping[str, int],
           check: AnswerCheck = "labels", answer_prompt: str | None = None) -> PromptClass:
        return PromptClass(name, "wb1", kind, item, template, labels, None, check, answer_prompt,
                           source=_SRC_WB, description="original workbench string (reproduction)")

    qa = "provide a complete and concise answer to the question based on the context. Question: {question}\nContext: {context}"
    return [
        wb("QuestionSelfRatedUnanswerablePromptWithChoices", "rating", "question",
           _WB_QSR_PRETEXT + "\n Question: {question}\nContext: {context}", RATING_0_5),
        wb("NuggetSelfRatedPrompt", "rating", "nugget",
           _WB_NSR_PRETEXT + "\n Key fact: {nugget}\nContext: {context}", RATING_0_5),
        wb("QuestionCompleteConciseUnanswerablePromptWithChoices", "extraction", "question", qa, {},
           "unanswerable"),
        wb("NuggetExtractionPrompt", "extraction", "nugget",
           "Extract the passage from the text that best relates to the key fact (nugget), ensuring relevance and "
           "clarity. Key Fact: {nugget}\nContext: {context}", {}, "unanswerable"),
        wb("QuestionCompleteConcisePromptWithAnswerKey2", "extraction", "question", qa, {}, "answer_key"),
        wb("QuestionCompleteConcisePromptWithT5VerifiedAnswerKey2", "verification", "question",
           VERIFICATION_TEMPLATE, YES_NO, answer_prompt="QuestionCompleteConcisePromptWithAnswerKey2@wb1"),
        wb("FagB", "direct", "query",
           "Instruction: Indicate if the passage is relevant for the question. Respond with 'Yes' or 'No'.\n\n"
           "Question: {query}\nPassage: {context}\nAnswer:\n", YES_NO),
        wb("FagB_few", "direct", "query", _WB_FAGB_FEW, YES_NO),
        wb("HELM", "direct", "query",
           "Instruction: Does the passage answer the que\n        ry? Respond with 'Yes' or 'No'.\n\n"
           "Query: {query}\nPassage: {context}\nAnswer:\n", YES_NO),
        wb("Sun", "direct", "query", SUN_INSTRUCTION + "\nQuery: {query}\nPassage: {context}\nAnswer:\n", YES_NO),
        wb("Sun_few", "direct", "query", _WB_SUN_FEW, YES_NO),
        wb("Thomas", "direct", "query", _WB_THOMAS, RATING_0_2),
    ]


# --------------------------------------------------------------------------------------------------------------
# Test-bank generation prompts (Phase 1).
#
# v1: the Rubric-Grading Workbench paper's Table 1 (Dietz, SIGIR 2024, section 3.1), whose caption says "The instruction
# to respond in valid JSON is appended": the prompt cell, then the instruction cell as published, including its
# set-like shape ``{question_text_1, ...}`` and, for nuggets, the outer object's missing closing brace (the
# answer parser accepts answers in that shape). TREC DL prompts ask for ``{n_items}`` items ("10" in the paper);
# the TREC CAR prompts as published name no number. The seed's ``<pre>`` marks a code block: v1 breaks lines there.
# wb1: the strings of the original workbench code (exam_pp/question_generation.py @032a3e4, MIT), whitespace
# included, with its list-shaped JSON instruction appended directly (``prompt + json_instruction``).

_SRC_RUBRIC_T1 = "Dietz, SIGIR 2024 (Rubric-Grading Workbench), Table 1"
_SRC_WB_GEN = "TREMA-UNH/rubric-grading-workbench exam_pp/question_generation.py @032a3e4 (MIT)"

QUESTION_JSON_INSTRUCTION = (
    "Give the question set in the following JSON format:\n```json\n"
    '{ "questions" : {question_text_1, question_text_2, ... } }\n```'
)
NUGGET_JSON_INSTRUCTION = (
    "Give the nugget set in the following JSON format:\n```json\n"
    '{ "nuggets" : {nugget_text_1, nugget_text_2, ... }\n```'
)
GENERATION_REPAIR_TEMPLATE = (
    "{prompt}\n\nYour previous answer was:\n{answer}\n\nIt could not be used: {problem}\n"
    "Answer again, in exactly the format asked for above."
)
"""The repair prompt of the built-in generation prompts (autograde's own text, not from the papers)."""

_DL_QUESTIONS = (
    "Break the query '{query_text}' into concise questions that must be answered. Generate {n_items} concise "
    "insightful questions that reveal whether information relevant for '{query_text}' was provided, showcasing a "
    "deep understanding of the subject matter. Avoid basic or introductory-level inquiries. Keep the questions "
    "short. {instruction}"
)
_DL_NUGGETS = (
    "Break the query '{query_text}' into concise nuggets that must be mentioned. Generate {n_items} concise "
    "insightful nuggets that reveal whether information relevant for '{query_text}' was provided, showcasing a "
    "deep understanding of the subject matter. Avoid basic or introductory-level nuggets. Keep nuggets to a "
    "maximum of 4 words. {instruction}"
)
_CAR_QUESTIONS = (
    "Explore the connection between '{query_title}' with a specific focus on the subtopic '{query_subtopic}'. "
    "Generate insightful questions that delve into advanced aspects of '{query_subtopic}', showcasing a deep "
    "understanding of the subject matter. Avoid basic or introductory-level inquiries. {instruction}"
)
_CAR_NUGGETS = (
    "Explore the connection between '{query_title}' with a specific focus on the subtopic '{query_subtopic}'. "
    "Generate insightful nuggets (key facts) that delve into advanced aspects of '{query_subtopic}', showcasing a "
    "deep understanding of the subject matter. Avoid basic or introductory-level nuggets. Keep nuggets to a "
    "maximum of 4 words. {instruction}"
)

_WB_QUESTION_JSON = ('\nGive the question set in the following JSON format:\n```json\n'
                     '{ "questions": [question_text_1, question_text_2, ... ] }\n```')
_WB_NUGGET_JSON = ('\nGive the nugget set in the following JSON format:\n```json\n'
                   '{ "nuggets": [nugget_text_1, nugget_text2, ... ] }\n```')


def _generation_prompts() -> list[PromptClass]:
    def gen(name: str, version: str, item: ItemKind, template: str, instruction: str, source: str,
            description: str) -> PromptClass:
        return PromptClass(name, version, "generation", item, template, source=source, description=description,
                           instruction=instruction, repair_template=GENERATION_REPAIR_TEMPLATE)

    t1 = _SRC_RUBRIC_T1
    return [
        gen("QuestionGenerationDL", "v1", "question", _DL_QUESTIONS, QUESTION_JSON_INSTRUCTION, f"{t1} (TREC DL)",
            "exam questions for a web query ({query_text}), {n_items} asked for"),
        gen("NuggetGenerationDL", "v1", "nugget", _DL_NUGGETS, NUGGET_JSON_INSTRUCTION, f"{t1} (TREC DL)",
            "nuggets (key facts, at most 4 words) for a web query ({query_text}), {n_items} asked for"),
        gen("QuestionGenerationCAR", "v1", "question", _CAR_QUESTIONS, QUESTION_JSON_INSTRUCTION,
            f"{t1} (TREC CAR Y3)", "exam questions for a subtopic ({query_title} / {query_subtopic})"),
        gen("NuggetGenerationCAR", "v1", "nugget", _CAR_NUGGETS, NUGGET_JSON_INSTRUCTION, f"{t1} (TREC CAR Y3)",
            "nuggets for a subtopic ({query_title} / {query_subtopic})"),
        gen("QuestionGenerationDL", "wb1", "question",
            "Break the query '{query_text}' into concise questions that must be answered. \n     Generate {n_items} "
            "concise insightful questions that reveal whether information relevant for '{query_text}' was provided, "
            "showcasing a deep understanding of the subject matter. Avoid basic or introductory-level inquiries. "
            "Keep the questions short.{instruction}", _WB_QUESTION_JSON, _SRC_WB_GEN,
            "original workbench string (reproduction)"),
        gen("NuggetGenerationDL", "wb1", "nugget",
            "Break the query '{query_text}' into concise nuggets that must be mentioned. \n     Generate {n_items} "
            "concise insightful nuggets that reveal whether information relevant for '{query_text}' was provided, "
            "showcasing a deep understanding of the subject matter. Avoid basic or introductory-level nuggets. Keep "
            "nuggets to a maximum of 4 words.{instruction}", _WB_NUGGET_JSON, _SRC_WB_GEN,
            "original workbench string (reproduction)"),
        gen("QuestionGenerationCAR", "wb1", "question",
            "Explore the connection between '{query_title}' with a specific focus on the subtopic '{query_subtopic}'."
            "\n        Generate insightful questions that delve into advanced aspects of '{query_subtopic}', showcasing "
            "a deep understanding of the subject matter. Avoid basic or introductory-level inquiries. {instruction}",
            _WB_QUESTION_JSON, _SRC_WB_GEN, "original workbench string (reproduction)"),
        gen("NuggetGenerationCAR", "wb1", "nugget",
            "Explore the connection between '{query_title}' with a specific focus on the subtopic '{query_subtopic}'."
            "\n        Generate insightful nuggets (key facts) that delve into advanced aspects of '{query_subtopic}', "
            "showcasing a deep understanding of the subject matter. Avoid basic or introductory-level nuggets. Keep "
            "nuggets to a maximum of 4 words.{instruction}", _WB_NUGGET_JSON, _SRC_WB_GEN,
            "original workbench string (reproduction)"),
    ]


# --------------------------------------------------------------------------------------------------------------
# Nugget evaluation prompts (TREC RAG 2024's importance and assignment labels). Our own wording: the labels and their
# meaning follow the track's definitions (vital: must be in a good answer; okay: worthwhile; support / partial_support
# / not_support of a nugget by a whole answer); the reference implementation's prompts are not copied. The label
# comes last, one word, so logits scoring reads it at the first answer position.

_SRC_NUGGETS = "autograde's own wording of the TREC RAG 2024 nugget labels (Pradeep et al., arXiv:2411.09607)"

NUGGET_IMPORTANCE_INSTRUCTION = (
    "You decide how important a fact (a nugget) is for answering a search query.\n"
    "- vital: a good answer to the query must state this fact.\n"
    "- okay: the fact is useful, but a good answer may leave it out.\n"
)
NUGGET_ASSIGNMENT_INSTRUCTION = (
    "You check whether an answer to a search query states a fact (a nugget).\n"
    "- support: the answer states the fact completely.\n"
    "- partial_support: the answer states part of the fact, or states it only vaguely.\n"
    "- not_support: the answer does not state the fact.\n"
)


def _nugget_prompts() -> list[PromptClass]:
    imp, asg = NUGGET_IMPORTANCE_INSTRUCTION, NUGGET_ASSIGNMENT_INSTRUCTION
    reply_imp = "Reply with one word, vital or okay."
    reply_asg = "Reply with one label: support, partial_support or not_support."
    return [
        PromptClass(
            "NuggetImportance", "v1", "importance", "nugget",
            imp + "Query: {query}\nNugget: {nugget}\n" + reply_imp,
            IMPORTANCE_GRADES,
            passage_first_template=imp + "Query: {query}\nNugget: {nugget}\n" + reply_imp,
            source=_SRC_NUGGETS,
            description="importance of a nugget for its query: vital or okay (no passage)",
        ),
        PromptClass(
            "NuggetAssignment", "v1", "assignment", "nugget",
            asg + "Query: {query}\nNugget: {nugget}\nAnswer text: {context}\n" + reply_asg,
            ASSIGNMENT_GRADES,
            passage_first_template=asg + "Answer text: {context}\nQuery: {query}\nNugget: {nugget}\n" + reply_asg,
            source=_SRC_NUGGETS,
            description="how a whole generated answer covers a nugget: support, partial_support or not_support",
        ),
    ]


# --------------------------------------------------------------------------------------------------------------
# UMBRELA (Upadhyay et al., 2024; castorini/umbrela, Apache-2.0): the relevance judge of TREC RAG 2024, a 0-3 scale.
# v1: the prompt files of the repository at commit 16cba3eb (src/umbrela/prompts/), byte for byte with {passage}
# named {context}: qrel_zeroshot_bing.txt (UMBRELA) and qrel_fewshot_bing.txt (UMBRELA_few, four fixed examples);
# their answers end in "##final score: N". pypi-0.0.7: the one prompt file the PyPI package umbrela 0.0.7 ships
# (an older qrel_fewshot_bing.txt, answering with a JSON dictionary of scores), with no examples (its
# few_shot_count 0; the package draws examples from qrels through pyserini otherwise).
# Not the Thomas prompt: Thomas et al.'s instruction asks for 0-2 after "Answer:"; UMBRELA adds level 3 ("dedicated
# to the query and contains the exact answer"), a rule per category, and the M/T/O steps (intent match,
# trustworthiness, overall) before a final score it asks for in a fixed form.

UMBRELA_COMMIT = "16cba3ebdfb79477850196695e06eef5ce96f339"
UMBRELA_PACKAGE = ("umbrela", "0.0.7")
"""The reference package of the ``pypi-0.0.7`` version (``make umbrela-env`` installs exactly this one)."""
UMBRELA_DIGESTS = {
    "UMBRELA@v1": ("qrel_zeroshot_bing.txt", "c92537a4f97293dfe1fd5f3dccc3f7dea44e3ace65061a74dbf8afc833441546"),
    "UMBRELA_few@v1": ("qrel_fewshot_bing.txt", "ce2fd0d7a936e773135d3546aa0f17e77354d72f194b9f5e73f4ef947fd9319e"),
    "UMBRELA@pypi-0.0.7": ("qrel_fewshot_bing.txt", "37f1ccf926ba9ed3cfc1f9d2d6c33ba80a1b4b9ac40dc45ed0981e55a4f5c55e"),
}
"""config name -> (upstream prompt file, sha256 of its text as the package reads it: stripped, ``{passage}`` and
``{examples}`` as written there)."""
UMBRELA_SYSTEM_MESSAGE = "You are a helpful assistant."
"""The system message UMBRELA's GPT judge sends before every prompt (``gpt_judge.py``, in the repository and in the
PyPI package 0.0.7 alike); its open-source judge sends the prompt as plain text, without a chat template."""
UMBRELA_FINAL_SCORE = "##final score: "
UMBRELA_JSON_SCORE = '{"O": '

UMBRELA_ZEROSHOT_BING = (
    "Given a query and a passage, you must provide a score on an integer scale of 0 to 3 with the following "
    "meanings:\n"
    "0 = represent that the passage has nothing to do with the query, \n"
    "1 = represents that the passage seems related to the query but does not answer it, \n"
    "2 = represents that the passage has some answer for the query, but the answer may be a bit unclear, or hidden "
    "amongst extraneous information and \n"
    "3 = represents that the passage is dedicated to the query and contains the exact answer.\n"
    "\n"
    "Important Instruction: Assign category 1 if the passage is somewhat related to the topic but not completely, "
    "category 2 if passage presents something very important related to the entire topic but also has some extra "
    "information and category 3 if the passage only and entirely refers to the topic. If none of the above "
    "satisfies give it category 0.\n"
    "\n"
    "Query: {query}\n"
    "Passage: {context}\n"
    "\n"
    "Split this problem into steps:\n"
    "Consider the underlying intent of the search.\n"
    "Measure how well the content matches a likely intent of the query (M).\n"
    "Measure how trustworthy the passage is (T).\n"
    "Consider the aspects above and the relative importance of each, and decide on a final score (O). Final score "
    "must be an integer value only.\n"
    "Do not provide any code in result. Provide each score in the format of: ##final score: score without "
    "providing any reasoning."
)

UMBRELA_FEWSHOT_BING = (
    "Given a query and a passage, you must provide a score on an integer scale of 0 to 3 with the following "
    "meanings:\n"
    "0 = represent that the passage has nothing to do with the query, \n"
    "1 = represents that the passage seems related to the query but does not answer it, \n"
    "2 = represents that the passage has some answer for the query, but the answer may be a bit unclear, or hidden "
    "amongst extraneous information and \n"
    "3 = represents that the passage is dedicated to the query and contains the exact answer.\n"
    "\n"
    "Following are some of the examples of relevance categorizations for different categories:\n"
    "\n"
    "###\n"
    "\n"
    "query: anthropological definition of environment\n"
    "passage: Abiotic factors are all of the non-living things in an environment. All biotic factors in an "
    "environment are dependent upon the abiotic factors in an environment. Some examples of biotic factors in the "
    "tropical rainforest are toucans, frogs, snakes, and lizards.Abiotic factors in the tropical rainforest "
    "include humidity, soil composition, temperature, and sunlight.very environment contains what are called "
    "'biotic' and 'abiotic' factors. In this lesson you will learn the definition and importance of abiotic "
    "factors. You will also view some examples of abiotic factors that are present in the tropical rainforest.\n"
    "\n"
    "### Steps:\n"
    "\n"
    "1. **Consider the underlying intent of the search:**\n"
    "   - The intent is to find the anthropological definition of \"environment,\" which implies looking for a "
    "definition within the context of anthropology.\n"
    "\n"
    "2. **Measure how well the content matches a likely intent of the query (M):**\n"
    "   - The passage discusses abiotic and biotic factors in an environment, specifically in a tropical "
    "rainforest, but does not relate these concepts to anthropology or provide a definition within an "
    "anthropological context.\n"
    "\n"
    "3. **Measure how trustworthy the passage is (T):**\n"
    "   - The trustworthiness of the source cannot be determined from the passage alone.\n"
    "\n"
    "4. **Consider the aspects above and the relative importance of each, and decide on a final score (O):**\n"
    "   - The passage does not directly address the anthropological definition of \"environment\" and is more "
    "focused on ecological concepts. It does not provide relevant information for the query.\n"
    "\n"
    "##final score: 0\n"
    "\n"
    "###\n"
    "\n"
    "query: anthropological definition of environment\n"
    "passage: Definition of Environment. Environment: The sum of the total of the elements, factors and conditions "
    "in the surroundings which may have an impact on the development, action or survival of an organism or group "
    "of organisms. Search MedTerms:\n"
    "\n"
    "### Steps:\n"
    "1. **Consider the underlying intent of the search:**\n"
    "   - The intent is to find the anthropological definition of \"environment,\" which implies looking for a "
    "definition that is specifically framed within the context of anthropology.\n"
    "\n"
    "2. **Measure how well the content matches a likely intent of the query (M):**\n"
    "   - The passage provides a general definition of \"environment\" but does not specifically address the "
    "anthropological context.\n"
    "\n"
    "3. **Measure how trustworthy the passage is (T):**\n"
    "   - The trustworthiness of the source cannot be determined from the passage alone. It mentions \"Search "
    "MedTerms,\" which implies a medical terminology source that may not be directly relevant to anthropology.\n"
    "\n"
    "4. **Consider the aspects above and the relative importance of each, and decide on a final score (O):**\n"
    "   - The passage is somewhat related to the query but does not meet the specific intent (anthropological "
    "context) and the trustworthiness is ambiguous.\n"
    "\n"
    "##final score: 1\n"
    "\n"
    "###\n"
    "\n"
    "query: anthropological definition of environment\n"
    "passage: Graduate Study in Anthropology. The graduate program in biological anthropology at CU Boulder offers "
    "training in several areas, including primatology, human biology, and paleoanthropology. We share an interest "
    "in human ecology, the broad integrative area of anthropology that focuses on the interactions of culture, "
    "biology and the environment.\n"
    "\n"
    "### Steps:\n"
    "\n"
    "1. **Consider the underlying intent of the search:**\n"
    "   - The intent is to find the anthropological definition of \"environment,\" implying a focus on how "
    "anthropology defines and interprets the environment within its context.\n"
    "\n"
    "2. **Measure how well the content matches a likely intent of the query (M):**\n"
    "   - The passage discusses human ecology, a broad area of anthropology that examines the interactions between "
    "culture, biology, and the environment. This aligns well with the anthropological context of the environment.\n"
    "\n"
    "3. **Measure how trustworthy the passage is (T):**\n"
    "   - The source refers to a graduate program at CU Boulder, a reputable institution, which indicates a high "
    "level of trustworthiness.\n"
    "\n"
    "4. **Consider the aspects above and the relative importance of each, and decide on a final score (O):**\n"
    "   - The passage is relevant and provides a contextual understanding of the environment in anthropology, "
    "though it does not offer a precise definition. This makes it somewhat detailed and relevant, thus scoring "
    "higher.\n"
    "\n"
    "##final score: 2\n"
    "\n"
    "###\n"
    "\n"
    "query: anthropological definition of environment\n"
    "passage: Archaeology, which studies past human cultures through investigation of physical evidence, is "
    "thought of as a branch of anthropology in the United States, although in Europe, it is viewed as a discipline "
    "in its own right, or related to other disciplines.nvironmental anthropology is a sub-specialty within the "
    "field of anthropology that takes an active role in examining the relationships between humans and their "
    "environment across space and time.\n"
    "\n"
    "### Steps:\n"
    "\n"
    "1. **Consider the underlying intent of the search:**\n"
    "   - The intent is to find the anthropological definition of \"environment,\" which means looking for an "
    "explanation of how anthropology views and studies the environment.\n"
    "\n"
    "2. **Measure how well the content matches a likely intent of the query (M):**\n"
    "   - The passage explicitly mentions \"environmental anthropology,\" a sub-specialty that examines the "
    "relationships between humans and their environment, directly addressing the anthropological perspective on "
    "the environment.\n"
    "\n"
    "3. **Measure how trustworthy the passage is (T):**\n"
    "   - The passage appears to provide an academic and structured explanation of anthropology sub-fields, "
    "indicating a trustworthy source, likely from an educational or scholarly background.\n"
    "\n"
    "4. **Consider the aspects above and the relative importance of each, and decide on a final score (O):**\n"
    "   - The passage is directly relevant to the query, providing specific information about the field of "
    "environmental anthropology and its focus on human-environment relationships, making it highly pertinent.\n"
    "\n"
    "##final score: 3\n"
    "\n"
    "###\n"
    "\n"
    "Important Instruction: Assign category 1 if the passage is somewhat related to the topic but not completely, "
    "category 2 if passage presents something very important related to the entire topic but also has some extra "
    "information and category 3 if the passage only and entirely refers to the topic. If none of the above "
    "satisfies give it category 0.\n"
    "\n"
    "Query: {query}\n"
    "Passage: {context}\n"
    "\n"
    "Split this problem into steps:\n"
    "Consider the underlying intent of the search.\n"
    "Measure how well the content matches a likely intent of the query (M).\n"
    "Measure how trustworthy the passage is (T).\n"
    "Consider the aspects above and the relative importance of each, and decide on a final score (O). Final score "
    "must be an integer value only.\n"
    "Do not provide any code in result. Provide each score in the format of: ##final score: score without "
    "providing any reasoning."
)

UMBRELA_PYPI_FEWSHOT_BING = (
    "Given a query and a passage, you must provide a score on an integer scale of 0 to 3 with the following "
    "meanings:\n"
    "0 = represent that the passage has nothing to do with the query, \n"
    "1 = represents that the passage seems related to the query but does not answer it, \n"
    "2 = represents that the passage has some answer for the query, but the answer may be a bit unclear, or hidden "
    "amongst extraneous information and \n"
    "3 = represents that the passage is dedicated to the query and contains the exact answer.\n"
    "\n"
    "Following are some of the examples of relevance categorizations for different categories:\n"
    "\n"
    "\n"  # {examples}: none (few_shot_count 0)
    "\n"
    "Assume that you are writing a report on the subject of the topic. If you would use any of the information "
    "contained in the passage in such a report, mark it 1. If the passage is primarily about the topic mark it 3, "
    "or contains vital information about the topic, mark it 2. Otherwise, mark it 0.\n"
    "\n"
    "Query: {query}\n"
    "Passage: {context}\n"
    "\n"
    "Split this problem into steps:\n"
    "Consider the underlying intent of the search.\n"
    "Measure how well the content matches a likely intent of the query (M).\n"
    "Measure how trustworthy the web page is (T).\n"
    "Consider the aspects above and the relative importance of each, and decide on a final score (O). Final score "
    "must be an integer value only.\n"
    "Produce a JSON dictionary of scores without providing any reasoning."
)


def umbrela_upstream_text(prompt: PromptClass) -> str:
    """A UMBRELA prompt's text as its upstream file has it (``{passage}``; ``{examples}`` where the file has it)."""
    text = prompt.template.replace("{context}", "{passage}")
    if prompt.version.startswith("pypi-"):
        text = text.replace(":\n\n\n\nAssume", ":\n\n{examples}\n\nAssume", 1)
    return text


def _umbrela_prompts() -> list[PromptClass]:
    src = f"castorini/umbrela src/umbrela/prompts/%s @{UMBRELA_COMMIT[:8]} (Apache-2.0)"
    return [
        PromptClass("UMBRELA", "v1", "direct", "query", UMBRELA_ZEROSHOT_BING, RATING_0_3,
                    source=src % "qrel_zeroshot_bing.txt", answer_prefix=UMBRELA_FINAL_SCORE,
                    description="UMBRELA zero-shot relevance (TREC RAG 2024's judge), 0-3, answer '##final score: N'",
                    system_message=UMBRELA_SYSTEM_MESSAGE),
        PromptClass("UMBRELA_few", "v1", "direct", "query", UMBRELA_FEWSHOT_BING, RATING_0_3,
                    source=src % "qrel_fewshot_bing.txt", answer_prefix=UMBRELA_FINAL_SCORE,
                    description="UMBRELA with its four fixed examples, 0-3, answer '##final score: N'",
                    system_message=UMBRELA_SYSTEM_MESSAGE),
        PromptClass("UMBRELA", "pypi-0.0.7", "direct", "query", UMBRELA_PYPI_FEWSHOT_BING, RATING_0_3,
                    source="PyPI umbrela 0.0.7 umbrela/prompts/qrel_fewshot_bing.txt, no examples (Apache-2.0)",
                    answer_prefix=UMBRELA_JSON_SCORE,
                    description="UMBRELA as PyPI umbrela 0.0.7 ships it: 0-3, a JSON dictionary of scores ('O')",
                    system_message=UMBRELA_SYSTEM_MESSAGE),
    ]


# --------------------------------------------------------------------------------------------------------------
# The registry.

_REGISTRY: dict[str, dict[str, PromptClass]] = {}
_DEFAULT_VERSION: dict[str, str] = {}


def _fields_text(names: tuple[str, ...] | list[str]) -> str:
    return ", ".join("{" + n + "}" for n in names)


def _validate_generation(p: PromptClass) -> list[str]:
    """Problems of a test-bank generation prompt (kind ``generation``)."""
    problems: list[str] = []
    if p.item_kind not in ("question", "nugget"):
        problems.append(f"generation prompts make questions or nuggets: item_kind {p.item_kind!r} must be question "
                        "or nugget")
    if p.labels:
        problems.append("generation prompts take no labels")
    if p.passage_first_template is not None or p.answer_prompt is not None or p.answer_check != "labels":
        problems.append("generation prompts take no passage_first_template, answer_prompt or answer_check")
    if not isinstance(p.template, str) or not p.template.strip():
        return [*problems, "template must be a non-empty string"]
    used = set(FIELD_RE.findall(p.template))
    unknown = sorted(used - set(GENERATION_FIELDS))
    if unknown:
        problems.append(f"template uses unknown field(s) {_fields_text(unknown)}; valid fields of generation "
                        f"prompts: {_fields_text(GENERATION_FIELDS)}")
    if not used & {"query_text", "query_title", "query_subtopic"}:
        problems.append("template lacks the query: use {query_text} or {query_title} / {query_subtopic}")
    if "instruction" in used and not (p.instruction or "").strip():
        problems.append("template uses {instruction} but the prompt has no instruction (the output format text)")
    if p.instruction is not None and FIELD_RE.search(p.instruction):
        bad = sorted(set(FIELD_RE.findall(p.instruction)))
        problems.append(f"instruction must not contain fields, found {_fields_text(bad)}")
    if p.repair_template is not None:
        bad = sorted(set(FIELD_RE.findall(p.repair_template)) - set(REPAIR_FIELDS))
        if bad:
            problems.append(f"repair_template uses unknown field(s) {_fields_text(bad)}; valid: "
                            f"{_fields_text(REPAIR_FIELDS)}")
        if "{problem}" not in p.repair_template:
            problems.append("repair_template lacks {problem} (the model must be told what was wrong)")
    return problems


def validate_prompt(p: PromptClass) -> list[str]:
    """Every problem with a prompt definition (empty when valid)."""
    problems: list[str] = []
    if not PROMPT_NAME_RE.match(p.name or ""):
        problems.append(f"name {p.name!r} must match {PROMPT_NAME_RE.pattern}")
    if not VERSION_RE.match(p.version or ""):
        problems.append(f"version {p.version!r} must match {VERSION_RE.pattern}")
    if p.kind not in KINDS:
        problems.append(f"kind {p.kind!r} is not one of {', '.join(KINDS)}")
    if p.kind == "generation":
        return problems + _validate_generation(p)
    if p.instruction is not None or p.repair_template is not None:
        problems.append("instruction and repair_template apply to generation prompts only")
    if p.item_kind not in ITEM_KINDS:
        problems.append(f"item_kind {p.item_kind!r} is not one of {', '.join(ITEM_KINDS)}")
    if p.answer_check not in ANSWER_CHECKS:
        problems.append(f"answer_check {p.answer_check!r} is not one of {', '.join(ANSWER_CHECKS)}")
    item_field = {"question": "question", "nugget": "nugget", "query": "query"}.get(p.item_kind, "question")
    for label, template in (("template", p.template), ("passage_first_template", p.passage_first_template)):
        if template is None:
            continue
        if not isinstance(template, str) or not template.strip():
            problems.append(f"{label} must be a non-empty string")
            continue
        used = set(FIELD_RE.findall(template))
        unknown = sorted(used - set(FIELDS))
        if unknown:
            problems.append(
                f"{label} uses unknown field(s) {', '.join('{' + u + '}' for u in unknown)}; "
                f"valid fields: {', '.join('{' + f + '}' for f in FIELDS)}"
            )
        required = {item_field} | ({"gold", "answer"} if p.kind == "verification" else
                                   {"query"} if p.kind == "importance" else {"context"})
        missing = sorted(required - used)
        if missing:
            problems.append(f"{label} lacks field(s) {', '.join('{' + m + '}' for m in missing)}")
    if p.kind == "extraction":
        if p.labels:
            problems.append("extraction prompts take no labels (their grade comes from answer_check)")
        if p.answer_check == "labels":
            problems.append("extraction prompts need answer_check: unanswerable or answer_key")
    else:
        if not p.labels:
            problems.append(f"{p.kind} prompts need labels: {{label: grade}}")
        if p.answer_check != "labels":
            problems.append(f"answer_check {p.answer_check!r} applies to extraction prompts only")
    for label, grade in dict(p.labels).items():
        if not isinstance(label, str) or not label.strip() or label != label.strip():
            problems.append(f"label {label!r} must be a non-empty string without surrounding spaces")
        if not isinstance(grade, int) or isinstance(grade, bool):
            problems.append(f"grade of label {label!r} must be an integer, got {grade!r}")
    lowered = [str(label).lower() for label in p.labels]
    if len(set(lowered)) != len(lowered):
        problems.append("labels must differ ignoring case")
    if p.kind in ("importance", "assignment") and p.item_kind != "nugget":
        problems.append(f"{p.kind} prompts label nuggets: item_kind must be nugget, got {p.item_kind!r}")
    if p.kind == "verification" and not p.answer_prompt:
        problems.append("verification prompts need answer_prompt (the extraction prompt whose answer is verified)")
    if p.answer_prefix is not None and (not p.answer_prefix.strip() or not p.labels or p.kind == "extraction"):
        problems.append("answer_prefix must be non-empty text, on a prompt with labels (not an extraction prompt)")
    return problems


def register_prompt(p: PromptClass, *, default: bool = False) -> PromptClass:
    """Add ``p`` to the registry; re-registering the same content is a no-op, different content an error."""
    problems = validate_prompt(p)
    if problems:
        raise InvalidValueError(f"invalid prompt {p.config_name}: " + "; ".join(problems))
    versions = _REGISTRY.setdefault(p.name, {})
    old = versions.get(p.version)
    if old is not None and old.digest() != p.digest():
        raise InvalidValueError(
            f"prompt {p.config_name} is already registered with a different text or label set; "
            "give the new one another version (e.g. v2) or another name"
        )
    versions[p.version] = p
    if default:
        _DEFAULT_VERSION[p.name] = p.version
    else:
        _DEFAULT_VERSION.setdefault(p.name, p.version)  # a new name's first version is its default
    return p


def get_prompt(name: str) -> PromptClass:
    """Look up ``Name`` (its default version) or ``Name@version``; unknown names list the valid ones."""
    base, _, version = name.partition("@")
    if base not in _REGISTRY:
        import difflib

        close = difflib.get_close_matches(base, list(_REGISTRY), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise UnknownNameError(
            f"unknown prompt class {base!r}{hint} registered: {', '.join(sorted(_REGISTRY))} "
            "(custom prompts: load their YAML file, see `autograde prompts --custom FILE`)"
        )
    versions = _REGISTRY[base]
    version = version or _DEFAULT_VERSION[base]
    if version not in versions:
        raise UnknownNameError(f"prompt class {base!r} has no version {version!r}; versions: {', '.join(sorted(versions))}")
    return versions[version]


def list_prompts() -> list[PromptClass]:
    """Every registered prompt (all versions), sorted by name then version."""
    return [_REGISTRY[name][v] for name in sorted(_REGISTRY) for v in sorted(_REGISTRY[name])]


def default_version(name: str) -> str:
    """The version a bare ``name`` resolves to."""
    return get_prompt(name).version


# --------------------------------------------------------------------------------------------------------------
# Rendering.


def fill(template: str, values: Mapping[str, str]) -> str:
    """Replace ``{field}`` for the known fields in ``values``; other braces stay as they are."""

    def repl(m: re.Match[str]) -> str:
        key = m.group(1)
        return values[key] if key in values else m.group(0)

    return FIELD_RE.sub(repl, template)


def field_values(
    request: GradeRequest, *, context: str | None = None, answer: str | None = None, gold: str | None = None
) -> dict[str, str]:
    """The template field values for ``request`` (``context`` overrides the passage, e.g. when truncated)."""
    values = {
        "question": request.item_text,
        "nugget": request.item_text,
        "query": request.query_text,
        "context": request.passage_text if context is None else context,
    }
    if answer is not None:
        values["answer"] = answer
    if gold is not None:
        values["gold"] = gold
    return values


def render(
    prompt: PromptClass,
    request: GradeRequest,
    order: PromptOrder = "question_first",
    *,
    context: str | None = None,
    answer: str | None = None,
    gold: str | None = None,
) -> str:
    """The prompt text for ``request`` (no chat template, no truncation: backends add those)."""
    return fill(prompt.template_for(order), field_values(request, context=context, answer=answer, gold=gold))


def render_generation(prompt: PromptClass, *, query_text: str, n_items: int, query_title: str | None = None,
                      query_subtopic: str | None = None) -> str:
    """The test-bank generation prompt for one query (no chat template: backends add it).

    ``query_title`` / ``query_subtopic`` default to the query text (CAR-style prompts on a plain query).
    """
    if prompt.kind != "generation":
        raise InvalidValueError(f"{prompt.config_name} is a {prompt.kind} prompt, not a test-bank generation prompt")
    values = {
        "query_text": query_text,
        "query_title": query_title if query_title is not None else query_text,
        "query_subtopic": query_subtopic if query_subtopic is not None else query_text,
        "n_items": str(n_items),
        "instruction": prompt.instruction or "",
    }
    return fill(prompt.template, values)


def render_repair(prompt: PromptClass, first_prompt: str, answer: str, problem: str) -> str:
    """The prompt sent after an unusable answer: the first prompt, the answer (cut to
    :data:`REPAIR_ANSWER_CHARS` characters) and what was wrong with it."""
    template = prompt.repair_template or GENERATION_REPAIR_TEMPLATE
    shown = answer if len(answer) <= REPAIR_ANSWER_CHARS else answer[:REPAIR_ANSWER_CHARS] + " [...]"
    return fill(template, {"prompt": first_prompt, "answer": shown, "problem": problem})


# --------------------------------------------------------------------------------------------------------------
# Custom prompts from YAML.

_CUSTOM_KEYS = {
    "name", "version", "kind", "item_kind", "template", "labels", "passage_first_template",
    "answer_check", "answer_prompt", "description", "instruction", "repair_template", "answer_prefix",
}


def parse_custom_prompts(entries: Any, source: str) -> list[PromptClass]:
    """Validate a list of prompt definitions; raise one error naming ``source`` with every problem."""
    if not isinstance(entries, list) or not entries:
        raise InvalidValueError(
            f"{source}: expected a non-empty YAML list of prompts, each with name, version, kind, item_kind, "
            "template and labels ({label: grade})"
        )
    problems: list[str] = []
    prompts: list[PromptClass] = []
    for i, entry in enumerate(entries):
        where = f"{source}: prompt #{i + 1}"
        if not isinstance(entry, dict):
            problems.append(f"{where}: expected a mapping, got {type(entry).__name__}")
            continue
        if entry.get("name"):
            where += f" ({entry['name']})"
        unknown = sorted(set(entry) - _CUSTOM_KEYS)
        if unknown:
            problems.append(f"{where}: unknown key(s) {', '.join(unknown)}; valid keys: {', '.join(sorted(_CUSTOM_KEYS))}")
        missing = sorted({"name", "version", "kind", "item_kind", "template"} - set(entry))
        if missing:
            problems.append(f"{where}: missing key(s) {', '.join(missing)}")
            continue
        labels = entry.get("labels") or {}
        if not isinstance(labels, dict):
            problems.append(f"{where}: labels must be a mapping {{label: grade}}, got {type(labels).__name__}")
            continue
        labels = {str(k): v for k, v in labels.items()}
        p = PromptClass(
            name=str(entry["name"]),
            version=str(entry["version"]),
            kind=entry["kind"],
            item_kind=entry["item_kind"],
            template=entry["template"],
            labels=labels,
            passage_first_template=entry.get("passage_first_template"),
            answer_check=entry.get("answer_check", "unanswerable" if entry["kind"] == "extraction" else "labels"),
            answer_prompt=entry.get("answer_prompt"),
            source=f"custom: {source}",
            exact=True,
            description=str(entry.get("description", "")),
            instruction=entry.get("instruction"),
            repair_template=entry.get("repair_template",
                                      GENERATION_REPAIR_TEMPLATE if entry["kind"] == "generation" else None),
            answer_prefix=entry.get("answer_prefix"),
        )
        errs = validate_prompt(p)
        problems.extend(f"{where}: {e}" for e in errs)
        builtin = _REGISTRY.get(p.name, {}).get(p.version)
        if not errs and builtin is not None and not builtin.source.startswith("custom:") and builtin.digest() != p.digest():
            problems.append(f"{where}: {p.config_name} is a built-in prompt; give yours another version or name")
        if not errs:
            prompts.append(p)
    names = [p.config_name for p in prompts]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        problems.append(f"{source}: prompt(s) defined twice: {', '.join(dupes)}")
    if problems:
        raise InvalidValueError(f"{len(problems)} problem(s) in custom prompts:\n" + "\n".join(f"  - {p}" for p in problems))
    return prompts


def load_custom_prompts(path: str | Path, *, register: bool = True) -> list[PromptClass]:
    """Read custom prompts from a YAML list and (by default) register them.

    Each entry: ``name``, ``version``, ``kind`` (rating | extraction | verification | direct), ``item_kind``
    (question | nugget | query), ``template`` and ``labels`` (``{label: grade}``); optional
    ``passage_first_template``, ``answer_check`` (extraction: unanswerable | answer_key), ``answer_prompt``
    (verification) and ``description``. Test-bank generation prompts: ``kind: generation``, ``item_kind``
    question | nugget, a ``template`` over ``{query_text}`` or ``{query_title}``/``{query_subtopic}`` plus
    ``{n_items}`` and ``{instruction}``, an ``instruction`` (the output format) and optionally a
    ``repair_template`` (``{prompt}``, ``{answer}``, ``{problem}``).
    """
    from autograde.core.yamlfile import read_yaml

    p = Path(path)
    entries = read_yaml(p, "custom prompts")
    prompts = parse_custom_prompts(entries, str(p))
    if register:
        for prompt in prompts:
            register_prompt(prompt)
    return prompts


for _p in _v1_prompts():
    register_prompt(_p, default=True)
for _p in _wb1_prompts():
    register_prompt(_p)
for _p in _generation_prompts():
    register_prompt(_p, default=_p.version == "v1")
for _p in _nugget_prompts():
    register_prompt(_p, default=True)
for _p in _umbrela_prompts():
    register_prompt(_p, default=_p.version == "v1")
