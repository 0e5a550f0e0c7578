#!/usr/bin/env bash
# eSpeak NG for the audio evidence (synth/procedural/speech.py, tests/synth/test_synth_voice.py); idempotent, Debian, as root.
# Installs Debian's espeak-ng package, then checks that it speaks to a WAV file and gives the same bytes twice.
set -euo pipefail

if ! command -v espeak-ng >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq espeak-ng >/dev/null
fi
espeak-ng --version

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for i in 1 2; do
  echo "Your order four five one two arrives on Thursday." | espeak-ng -v en-us -s 160 -w "$tmp/$i.wav"
done
test -s "$tmp/1.wav" || { echo "espeak-ng wrote no audio" >&2; exit 1; }
cmp -s "$tmp/1.wav" "$tmp/2.wav" || { echo "espeak-ng gave different bytes for the same text" >&2; exit 1; }
echo "espeak-ng: speech to WAV works and is deterministic"
