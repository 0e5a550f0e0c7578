"""The wording layer: a step graph's goals, a world and a seeded rng in, the user's words out.

`request.render` writes the request (goals, not procedures, in one of several channels, tones and
levels of detail), `request.day_two` a later day's instructions; `mail_texts` the texts inside the
world (the party's mail, notices, reports); `phrases` holds the phrase tables, English and Chinese.
"""
