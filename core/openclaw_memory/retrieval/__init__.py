"""Answering a query from an index: the search pipeline (:mod:`.pipeline`), pure ranking and fusion
(:mod:`.ranking`), reranking (:mod:`.rerank`, :mod:`.late_interaction`), the line ranges a hit returns
(:mod:`.result_ranges`) and the evaluation of a memory's search (:mod:`.evaluation`)."""
