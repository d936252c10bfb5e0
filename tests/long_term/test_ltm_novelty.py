"""The word rules that decide whether a new memory repeats, corrects or differs from a similar one."""

from __future__ import annotations

import pytest

from openclaw_memory.long_term.novelty import names_a_relative_day, relation


_VALUES_AND_NEGATIONS = [
    # a value, a date, a limit, a password, a number or a negation changed: the same subject, corrected
    ("The meeting room is 4.12", "The meeting room is 3.07", "update"),
    ("My flight is on 14 March", "My flight is on 15 March", "update"),
    ("The API rate limit is 500 requests per minute", "The API rate limit is 50 requests per minute", "update"),
    ("The Wi-Fi password is sunflower42", "The Wi-Fi password is now moonbeam7", "update"),
    ("The Wi-Fi password is sunflower", "The Wi-Fi password is now moonbeam", "update"),
    ("My phone number is +15551234567", "Remember that my new phone number is +15559876543", "update"),
    ("The codename is Falcon1", "The codename is Falcon2", "update"),
    ("I like coffee", "I don't like coffee", "update"),
    ("I don't like coffee", "I like coffee", "update"),
    ("I prefer tea", "Actually I now prefer coffee", "update"),
    # "cannot", "won't", "can't" negate as "not" does
    ("I cannot eat peanuts", "I can eat peanuts", "update"),
    ("I can eat peanuts", "I cannot eat peanuts", "update"),
    ("I will attend the offsite", "I won't attend the offsite", "update"),
    ("I cannot eat peanuts", "I can't eat peanuts", "repeat"),
    ("I cannot eat peanuts", "I can not eat peanuts", "repeat"),
    # a number written as a word is a value as its digits are
    ("I have two cats", "I have three cats", "update"),
    ("Our team has five engineers", "Our team has seven engineers", "update"),
    ("The standup is at nine", "The standup is at 10", "update"),
    ("I have two cats", "I have 2 cats", "repeat"),
    # another subject (an identifier before the verb) or a new detail: a different memory, kept
    ("Ticket ABC-123A is assigned to Bob", "Ticket ABC-123B is assigned to Bob", "different"),
    ("Server A is in rack 7", "Server B is in rack 7", "different"),
    ("Project 3 codename is Falcon3", "Project 4 codename is Falcon4", "different"),
    ("I prefer dark mode", "I prefer dark mode in every editor", "different"),
    ("I like tea", "I like biscuits", "different"),
    ("I love dark mode", "I hate dark mode", "different"),
    ("We decided to use PostgreSQL", "We decided to use PostgreSQL for billing", "different"),
    ("The Wi-Fi password is sunflower42", "The Wi-Fi password changed", "different"),
    ("我喜欢绿茶", "我喜欢红茶", "different"),
    # every word and value is in the old memory, but a value is said of something else there: new information
    ("The door code is 1234 and the alarm code is 5678", "The alarm code is 1234", "different"),
    ("My flight leaves on 14 March and returns on 20 March", "My flight leaves on 20 March", "different"),
    ("Prod DB is on host db1, staging DB is on host db2", "Prod DB is on host db2", "update"),  # its subject's value
    # nothing new: a repeat
    ("The door code is 1234 and the alarm code is 5678", "The alarm code is 5678", "repeat"),
    ("The door code is 1234, the alarm code is 5678", "Remember that the door code is 1234", "repeat"),
    ("The budget is 5,000 EUR", "The budget is 5,000 EUR", "repeat"),
    ("I prefer dark mode in every editor", "I prefer dark mode", "repeat"),
    ("User prefers dark mode", "I prefer dark mode", "repeat"),
    ("My phone number is +15551234567", "Remember that my phone number is +15551234567", "repeat"),
    ("I prefer dark mode in every editor", "I prefer dark mode in every editor.", "repeat"),
    ("Remember that my new phone number is +1555", "My new phone number is +1555", "repeat"),
    ("我喜欢绿茶", "我喜欢绿茶", "repeat"),
]


_DAYS_AND_MONTHS = [
    # a weekday, a month or a relative day is a value: changed, it corrects the fact, as a date's digits do
    ("The meeting is on Monday", "The meeting is on Tuesday", "update"),
    ("The product launch is planned for March", "The product launch is planned for May", "update"),
    ("The launch is in May", "The launch is in June", "update"),
    ("The deadline is tomorrow", "The deadline is today", "update"),
    ("Porada je v pondělí", "Porada je v úterý", "update"),
    ("Monday's meeting is in room 3", "Tuesday's meeting is in room 3", "different"),  # another meeting
    # ... written alike, it repeats
    ("The standup is on Mondays", "the standup is on Monday", "repeat"),
    ("The standup is on Mon", "The standup is on Monday.", "repeat"),
    ("Porada je ve středu", "Porada je ve středa", "repeat"),
    # "may", "march" and "sun" in lower case (or "Sun" the star) are words, not dates
    ("You may use the car", "You may use the car", "repeat"),
    ("The launch is in may", "The launch is in june", "update"),
    ("The sun is bright", "The Sun is bright", "repeat"),
]


_NEGATION_BY_CLAUSE = [
    # the same words, the negation moved to the other clause: a correction, not a repeat
    ("I don't drink coffee but I drink tea", "I drink coffee but I don't drink tea", "update"),
    ("I eat fish, but I never eat meat", "I eat meat, but I never eat fish", "update"),
    ("My son is allergic to peanuts and not to milk", "My son is allergic to milk and not to peanuts", "update"),
    # the negation where it was: a repeat
    ("I eat fish, but I never eat meat", "I eat fish but never eat meat", "repeat"),
    ("I eat fish, but I never eat meat", "I never eat meat", "repeat"),
]


_PREPOSITIONS = [
    # another preposition to the same word, or an exception dropped: new information
    ("Bob works for Alice", "Bob works with Alice", "update"),
    ("I prefer dark mode in every editor except in VS Code", "I prefer dark mode in VS Code", "update"),
    ("I prefer dark mode in every editor except VS Code", "I prefer dark mode in every editor", "update"),
    ("I like all fruit except apples", "I like all fruit except pears", "different"),
    # the same prepositions to the same words, wherever they stand: a repeat
    ("I want to use Rust for the parser", "For the parser I want to use Rust", "repeat"),
    ("I eat everything except fish", "I eat everything except fish.", "repeat"),
]


_VALUE_SLOTS = [
    # a value in another slot adds a detail: a different memory, the first one stays
    ("The team meeting is in room 3", "The team meeting is on Tuesday", "different"),
    ("The team meeting is in room 3", "The team meeting is at 10", "different"),
    ("My flight is on 14 March", "My flight is from gate B12", "different"),
    # another value in the same slot corrects it
    ("The meeting is at 10", "The meeting is at 11 in room 5", "update"),
    ("The door code is 1234", "The door code: 5678", "update"),
    ("The door code is 1234", "The door code: 1234", "repeat"),
    # another value said of other things (the same subject: only "I") is another fact
    ("I have yoga on Monday", "I have piano on Tuesday", "different"),
    ("I have yoga at 9", "I have piano at 10", "different"),
]


_PLACES_AND_UNLISTED_VERBS = [
    # a place name after in/at/from with a verb of where something is now: the same thing, moved
    ("Our office is in Brno", "Our office is in Prague", "update"),
    ("My sister lives in Berlin", "My sister lives in Paris", "update"),
    ("I am from Brno", "I am from Prague", "update"),
    # a time after a preposition with a verb the rules do not list: the same event, another time
    ("The backup job runs at 02:00 every night", "The backup job runs at 03:30 every night", "update"),
    ("The team standup happens at 9:30 every weekday", "The team standup happens at 10:15 every weekday", "update"),
    # ... said again: still a repeat
    ("Our office is in Brno", "our office is in Brno.", "repeat"),
    ("The backup job runs at 02:00 every night", "the backup job runs at 02:00 every night", "repeat"),
    # places one went to, another thing named, another verb: different memories, both kept
    ("I visited Paris in 2019", "I visited Rome in 2019", "different"),
    ("I was in Paris last year", "I was in Rome last year", "different"),
    ("Alice works in Brno", "Bob works in Brno", "different"),
    ("Parcel 2000A arrived on Monday", "Parcel 2001A arrived on Monday", "different"),
    ("Our office is in Brno", "Our office is near Prague", "different"),
]


@pytest.mark.parametrize(("old", "new", "expected"), [
    *_VALUES_AND_NEGATIONS, *_DAYS_AND_MONTHS, *_NEGATION_BY_CLAUSE, *_PREPOSITIONS, *_VALUE_SLOTS,
    *_PLACES_AND_UNLISTED_VERBS,
])
def test_relation(old: str, new: str, expected: str) -> None:
    assert relation(new, old) == expected


@pytest.mark.parametrize(("first", "second"), [
    ("Bob reports to Alice", "Alice reports to Bob"),
    ("Dana is the manager of Eva", "Eva is the manager of Dana"),
    ("My flight goes from Lisbon to Prague", "My flight goes from Prague to Lisbon"),
    ("Move the meeting from 3.07 to 4.12", "Move the meeting from 4.12 to 3.07"),
    # in lower case, a preposition leading to another word tells them apart
    ("I prefer tea over coffee", "I prefer coffee over tea"),
    ("I like tea more than coffee", "I like coffee more than tea"),
    ("bob reports to alice", "alice reports to bob"),
])
def test_names_or_values_in_another_order_are_not_a_repeat(first: str, second: str) -> None:
    """The same words, the names swapped: another fact (its correction), in either direction."""
    assert relation(second, first) == "update"
    assert relation(first, second) == "update"


@pytest.mark.parametrize(("old", "new"), [
    ("Bob reports to Alice.", "bob reports to alice"),
    ("bob reports to alice", "Bob reports to Alice."),
    ("Remember: Bob reports to Alice", "Bob reports to Alice"),
    ("Note: bob reports to Alice", "Remember that Bob reports to Alice"),
    ("I prefer dark mode in VS Code", "In VS Code I prefer dark mode"),
    ("Alice said hello. Bob left", "Bob left. Alice said hello"),  # two sentences, each name said alike
    ("We use PostgreSQL for billing", "For billing we use PostgreSQL"),
    ("I prefer dark mode in every editor", "In every editor I prefer dark mode"),
    ("Remember that I prefer tea over coffee", "I prefer tea over coffee"),
    # "march" and "may" next to a number or after "in" are months in lower case too
    ("My return flight from Lisbon to Prague is on 14 March in the evening",
     "my return flight from lisbon to prague is on 14 march in the evening"),
    ("The launch is in May", "the launch is in may"),
])
def test_the_same_names_in_the_same_order_are_a_repeat(old: str, new: str) -> None:
    assert relation(new, old) == "repeat"


def test_relative_days_are_named() -> None:
    assert names_a_relative_day("I have a dentist appointment tomorrow")
    assert names_a_relative_day("The deploy is TONIGHT.")
    assert not names_a_relative_day("The meeting is on Monday")
