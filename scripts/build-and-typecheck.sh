#!/bin/sh
# `npm test`'s first step: the build (the tests run dist/) and the type check of sources, tests and
# benchmarks, side by side. Each is one tsc run of ~12 s; neither reads what the other writes.
npm run build &
build=$!
npm run typecheck
typed=$?
wait "$build"
built=$?
[ "$built" -eq 0 ] && [ "$typed" -eq 0 ]
