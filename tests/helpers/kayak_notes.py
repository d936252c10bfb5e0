"""Two days of chat notes and a note of many overlapping kayak chunks, for result-range tests."""

from __future__ import annotations


# A dialogue about a kayak trip (the word in two overlapping chunks of 2023-05-02) and another day's note that
# mentions kayaking once, in its third line.
DAY1 = ["# 2 May 2023", "",
        "Ann: How was the weekend?",
        "Bo: Busy, we cleaned the garage.",
        "Ann: Did you find anything?",
        "Bo: Old photos and a broken lamp.",
        "Ann: Any plans for the summer?",
        "Bo: A kayak trip on the river with my brother.",
        "Ann: A kayak trip sounds great, where will you start?",
        "Bo: At the old mill, the kayak rental is there.",
        "Ann: Take a waterproof bag for the phone.",
        "Bo: Good idea, thanks.",
        "Ann: What about the dog?",
        "Bo: The neighbours will feed him."]


DAY2 = ["# 9 May 2023", "",
        "Ann: I finally booked the kayak lessons for June.",
        "Bo: Nice, at the lake?",
        "Ann: Yes, every Saturday morning.",
        "Bo: Send photos!",
        "Ann: I will.",
        "Bo: And how is work?",
        "Ann: Quiet this month."]


FILES = {"memory/2023-05-02.md": "\n".join(DAY1) + "\n", "memory/2023-05-09.md": "\n".join(DAY2) + "\n"}


# Many overlapping chunks of one note match "kayak"; another note matches once, weaker.
KAYAKS = {"memory/a.md": "\n".join(f"Ann: kayak kayak trip number {i} on the river" for i in range(60)) + "\n",
          "memory/b.md": "\n".join(["# B", "", "Bo: the kayak was red", "Ann: nice"]
                                   + [f"filler line {i}" for i in range(20)]) + "\n"}

