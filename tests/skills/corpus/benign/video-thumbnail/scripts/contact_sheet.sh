#!/usr/bin/env bash
set -euo pipefail
in=${1:?usage: contact_sheet.sh VIDEO OUT.jpg [COLS] [ROWS]}
out=${2:?}
cols=${3:-4}; rows=${4:-3}
n=$((cols * rows))
dur=$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$in")
step=$(awk -v d="$dur" -v n="$n" 'BEGIN{printf "%.3f", d/(n+1)}')
ffmpeg -v error -y -i "$in" \
  -vf "fps=1/$step,scale=320:-1,tile=${cols}x${rows}:padding=4:margin=4" \
  -frames:v 1 "$out"
echo "$out: $n frames every ${step}s"
