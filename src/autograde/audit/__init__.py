"""Judge audit: how a grader agrees with the human judgments per topic and at the top (meta-evaluation), whether it
can be gamed (robustness audit with perturbed passages), and the judge x collection table."""
