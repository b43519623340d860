#!/bin/sh
# Starts one compiled service as production runs it: `node dist/main.js` in the service's folder,
# one process (exec: no shell left behind), with the runtime settings its memory figures were
# measured with (docs/performance.md, "Footprint and start-up"). Every start path uses this file:
# each service's `pnpm start`, the Docker image, the e2e harness and the benchmarks.
# Usage: sh scripts/start-service.sh services/<name>
set -e
cd "$1"
# MALLOC_ARENA_MAX: glibc malloc arenas. By default each thread that compiles wasm (Prisma's query
# compiler, undici's HTTP parser) or runs libuv work gets one, and its freed pages stay mapped: one
# arena takes 8-20 MB off each service's idle RSS, at no measurable CPU cost per list call.
# A value set by the caller wins.
arenas=1
case "$(basename "$PWD")" in
  # The young generation capped at 2 MB per semi-space (V8 grows it to 16 MB during start and never
  # gives it back): the gateway idles at 78 MB instead of 90 (issue 13's goal: 80), webhook-delivery
  # at 105-109 instead of 121-127 (goal: 120) with its CPU per delivery unchanged. For the gateway,
  # 1 MB saved 2 MB more but cost ~25% more CPU per forwarded list in scavenges; 4 MB idled at 82 MB
  # (docs/performance.md, D31).
  gateway | webhook-delivery) set -- --max-semi-space-size=2 ;;
  *) set -- ;;
esac
export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-$arenas}"
exec node "$@" dist/main.js
