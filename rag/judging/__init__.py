"""Judging: from the question and its candidate passages to the decision — answer or refuse — and, for an
answer without a model, the quotes. Retrieval (rag.index.retrieval, rag.answering.candidates, rag.answering.pools)
finds the passages; answering (rag.answering.pipeline, its judge stage rag.answering.judge) calls this and streams
what it decides. Three more readings live here: the asks of a question that asks more than one thing
(`parts`), the passages that only navigate — a table of contents, a sidebar — which rank after content and are
never quoted (`navigation`), and how well a passage supports a sentence of a model's answer (`support`).

The interface:

* `analysis.analyse(question, rewritten, idf)` → `QuestionAnalysis`, the question read once: language,
  tokens, IDF weights, key words, names, the kind of answer asked, whether it asks what is not so or for code;
* `judge.Judge(gate).judge(analysis, passages, meaning, extractive=...)` → `Judgement`: the evidence, the
  near-miss terms, the gate's decision with typed `Signals`, and the quotes when an extractive answer is wanted
  (`passages`: what the answer's stages found; `meaning`: the embedded model bound to the index);
* `calibration.Calibration`, the fitted numbers, read from calibration.json (each with the script and data it
  was fitted on; the fit scripts write it with --write).

What the judge computes, in order, and where:

* the sentence evidence (`evidence.gather_evidence` → `Evidence` of `ScoredUnit`s): every quotable unit of
  the passages (`quotable`: a sentence, a list item, a table row, a code block) scored by meaning on one
  scale across languages (`scales`) and by the question's words it holds, as asked or translated;
* the near miss (`near_miss.missing_terms`): the question's key words no passage mentions in any words the
  model relates to them;
* the gate (`gate.EvidenceGate` → `GateDecision`): a logistic model per question language over the signals
  (passage cosine, best sentence, its coverage, missing names, the translated share), or a reranker's score;
* the quotes (`extractive.choose_quotes`): the best units, ordered by named steps — the kind of answer asked
  (`answer_kind`), a question about what is not so (`negation`), a section the question names (`sections`),
  the rule before its exception, the asker's own language first — and rendered with their intros.

benchmarks/ablation.py measures what each step is worth on the held-out corpora (BENCHMARKS.md).
"""
