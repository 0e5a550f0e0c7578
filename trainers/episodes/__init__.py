"""Headless episodes: run policies in environment specs, record, replay, batch locally or on Ray."""
