#!/bin/sh
# Ctrl-C and --resume (run by ctest, POSIX): a run that saves is sent SIGINT at a random step;
# it must finish that step, save, print one line and exit with status 130. Resumed, it must print
# exactly what an uninterrupted run prints from that step on.
#   sh interrupt_resume.sh <16_train_tiny_gpt> <scratch folder>
set -u
exe=$1 dir=$2/interrupt_resume
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir" || exit 1
flags="--steps 150 --log_every 1 --eval_every 25 --no_compare --sample 40"
# The lines that must repeat, speed fields masked (as resume.cmake keeps them).
keep() { sed -n -e 's/ tokens_per_s=[0-9.]* step_ms=[0-9.]*//' -e '/^sample /,$p' \
  -e '/^step [0-9]* loss /p' -e '/^eval step /p' -e '/^summary /p' "$1"; }

"$exe" $flags > whole.txt 2>/dev/null || { echo "the uninterrupted run failed"; exit 1; }
# A step between 5 and 110, from the clock (the test prints it, to repeat a failure).
k=$(awk 'BEGIN { srand(); print 5 + int(rand() * 106) }')
echo "sending SIGINT once step $k is printed"
"$exe" $flags --save run.safetensors > cut.txt 2> cut.err &
pid=$!
waited=0
until grep -q "^step $k loss" cut.txt 2>/dev/null; do
  sleep 0.01
  waited=$((waited + 1))
  [ "$waited" -gt 6000 ] && { kill "$pid"; echo "step $k never came"; exit 1; }
done
kill -INT "$pid"
wait "$pid"
rc=$?
[ "$rc" -eq 130 ] || { echo "exit status $rc after SIGINT, expected 130"; cat cut.txt; exit 1; }
line=$(grep '^interrupted after step' cut.txt)
echo "$line"
case "$line" in
  *"saved the run to run.safetensors; continue it with --resume run.safetensors") ;;
  *) echo "no 'interrupted after step ... saved ...' line"; cat cut.txt; exit 1 ;;
esac
[ -s run.safetensors ] || { echo "no checkpoint at --save"; exit 1; }
"$exe" --resume run.safetensors --sample 40 > resumed.txt 2>/dev/null || { echo "--resume failed"; exit 1; }
keep resumed.txt > got.txt
keep whole.txt > all.txt
first=$(head -n 1 got.txt)
at=$(grep -n -x -F "$first" all.txt | head -n 1 | cut -d: -f1)
[ -n "$at" ] || { echo "the resumed run's first line '$first' is not in the whole run"; exit 1; }
tail -n "+$at" all.txt > expected.txt
if ! cmp -s expected.txt got.txt; then
  echo "the resumed run differs from the uninterrupted one:"; diff expected.txt got.txt | head -20
  exit 1
fi
echo "resumed at '$first': the last $(wc -l < got.txt) lines equal the uninterrupted run's"
