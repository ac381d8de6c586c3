"""The personalized calibration network of LLM-RUBRIC (paper section 3, equations 3-5).

    z1 = sigmoid((W1 + W1^a) [1; x])
    z2 = sigmoid((W2 + W2^a) [1; z1])
    p_a(y_i | T, Q_i) = softmax((V_i + V_i^a) [1; z2])     for every question i

``W`` and ``V`` are shared by all judges, ``W^a`` and ``V^a`` belong to judge a. ``V`` is one 3-D tensor
(question x (1 + h2) x most options); the logits of options a question does not have are -inf, so each
question's softmax runs over its own options (Q8 of the dialogue rubric has 3). A judge the network never
saw (index -1) gets the judge-independent weights alone.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

__all__ = ["UNSEEN", "CalibrationNetwork", "masked_nll"]

UNSEEN = -1
"""Judge index of a judge without judge-specific weights."""


class CalibrationNetwork(nn.Module):
    """Two sigmoid layers and per-question softmax heads, each with shared + judge-specific weights."""

    valid: torch.Tensor
    """questions x options: whether the question has the option (a buffer, registered in ``__init__``)."""

    def __init__(self, n_features: int, n_judges: int, option_counts: Sequence[int], hidden1: int, hidden2: int,
                 generator: torch.Generator, init: str = "scaled", personalized: bool = True) -> None:
        super().__init__()
        n_q, k = len(option_counts), max(option_counts)
        self.personalized = personalized
        self.n_judges = n_judges

        def shared(*shape: int) -> nn.Parameter:
            std = 1.0 if init == "paper" else shape[-2] ** -0.5
            return nn.Parameter(torch.randn(*shape, generator=generator) * std)

        def personal(*shape: int) -> nn.Parameter:
            if init == "paper":
                return nn.Parameter(torch.randn(*shape, generator=generator))
            return nn.Parameter(torch.zeros(*shape))

        self.W1 = shared(n_features + 1, hidden1)
        self.W2 = shared(hidden1 + 1, hidden2)
        # one draw per question: a question added at the end leaves the other heads' initial weights unchanged
        self.V = nn.Parameter(torch.stack([shared(hidden2 + 1, k).data for _ in range(n_q)]))
        self.W1a = personal(max(n_judges, 1), n_features + 1, hidden1)
        self.W2a = personal(max(n_judges, 1), hidden1 + 1, hidden2)
        self.Va = personal(max(n_judges, 1), n_q, hidden2 + 1, k)
        valid = torch.zeros(n_q, k, dtype=torch.bool)
        for i, c in enumerate(option_counts):
            valid[i, :c] = True
        self.register_buffer("valid", valid)

    def personal_parameters(self) -> list[nn.Parameter]:
        return [self.W1a, self.W2a, self.Va]

    def forward(self, x: torch.Tensor, judge: torch.Tensor) -> torch.Tensor:
        """Logits (batch x questions x options), -inf for options a question does not have."""
        ones = torch.ones(x.shape[0], 1, dtype=x.dtype)
        h = torch.cat([ones, x], dim=1)
        if self.personalized:
            known = (judge >= 0).to(x.dtype)
            rows, j = torch.arange(x.shape[0]), judge.clamp(min=0)

            def personal(inp: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
                # every judge's term (batch x judges x out), then each row's own judge: a matmul and a gather
                # are about twice as fast to train as gathering a weight matrix per row
                every = (inp @ w.permute(1, 0, 2).reshape(w.shape[1], -1)).view(inp.shape[0], w.shape[0], -1)
                return every[rows, j] * known[:, None]

            z1 = torch.sigmoid(h @ self.W1 + personal(h, self.W1a))
            h1 = torch.cat([ones, z1], dim=1)
            z2 = torch.sigmoid(h1 @ self.W2 + personal(h1, self.W2a))
            h2 = torch.cat([ones, z2], dim=1)
            n_q, _, k = self.V.shape
            va = self.Va.permute(0, 2, 1, 3).reshape(self.Va.shape[0], self.Va.shape[2], n_q * k)
            logits = (torch.einsum("bi,qik->bqk", h2, self.V) + personal(h2, va).view(-1, n_q, k))
        else:
            z1 = torch.sigmoid(h @ self.W1)
            z2 = torch.sigmoid(torch.cat([ones, z1], dim=1) @ self.W2)
            logits = torch.einsum("bi,qik->bqk", torch.cat([ones, z2], dim=1), self.V)
        return logits.masked_fill(~self.valid, float("-inf"))

    def probabilities(self, x: torch.Tensor, judge: torch.Tensor) -> torch.Tensor:
        """Predicted distributions (batch x questions x options); 0 for options a question does not have."""
        return torch.softmax(self.forward(x, judge), dim=-1)


def masked_nll(logits: torch.Tensor, answers: torch.Tensor, questions: Sequence[int] | None = None) -> torch.Tensor:
    """Mean negative log-likelihood over the answers present (option index >= 0) of ``questions``.

    The denominator counts present answers only: NA and missing answers neither add loss nor dilute it
    (the released code averaged over masked entries too).
    """
    logp = torch.log_softmax(logits, dim=-1)
    picked = logp.gather(2, answers.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    mask = answers >= 0
    if questions is not None:
        keep = torch.zeros(answers.shape[1], dtype=torch.bool)
        keep[list(questions)] = True
        mask = mask & keep
    n = mask.sum()
    if int(n) == 0:
        return logits.sum() * 0.0
    return -(picked * mask).sum() / n
