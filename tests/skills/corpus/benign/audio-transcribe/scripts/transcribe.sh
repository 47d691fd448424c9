#!/usr/bin/env bash
set -euo pipefail
wav=${1:?usage: transcribe.sh FILE.wav [MODEL]}
model=${2:-base.en}
WHISPER_DIR=${WHISPER_DIR:-$HOME/src/whisper.cpp}
bin="$WHISPER_DIR/main"
[[ -x $bin ]] || bin="$WHISPER_DIR/build/bin/whisper-cli"
mfile="$WHISPER_DIR/models/ggml-$model.bin"
[[ -f $mfile ]] || { echo "model $model not found in $WHISPER_DIR/models" >&2; exit 2; }
base=${wav%.*}
"$bin" -m "$mfile" -f "$wav" -osrt -of "$base"
awk 'BEGIN{RS=""; FS="\n"} {split($2,t," --> "); printf "[%s] %s\n\n", substr(t[1],4,5), $3}' \
  "$base.srt" > "$base.md"
echo "wrote $base.srt and $base.md"
