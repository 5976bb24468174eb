#!/bin/sh
# `npm test`'s first step: the build (the tests run dist/) and the type check of sources, tests and
# benchmarks, side by side (each is one tsc run; neither reads what the other writes), then the
# linter and the formatter's check (`npm run lint`).
npm run build &
build=$!
npm run typecheck
typed=$?
wait "$build"
built=$?
[ "$built" -eq 0 ] && [ "$typed" -eq 0 ] && npm run lint
