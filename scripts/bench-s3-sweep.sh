#!/usr/bin/env bash
# Issue 22's sweep case at full size: 1,000 uploads (one-shot, resumable with small chunks,
# resumable with 5 MiB multipart parts) cut off at random points, the server killed with -9 once
# midway, every open session expired, then the sweep: prints how many uploads were killed and
# committed, and what is left (target: 0 multipart uploads, 0 upload objects, 0 unreferenced and
# 0 missing revision objects; every committed file's SHA-256 is checked). The test suite runs
# the same test with 50 (S3ContentTests.testKilledUploadsThenSweepLeaveNoOrphansAndNoDamage).
# SeaweedFS comes from scripts/install-deps.sh; N=… sets another count.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/install-deps.sh >/dev/null
swift build --build-tests 2>&1 | grep -Ev "^warning: prohibited flag" | tail -n 1
start=${EPOCHREALTIME//[!0-9]/}
VAULT_S3_KILLED_UPLOADS=${N:-1000} swift test --skip-build \
  --filter S3ContentTests.testKilledUploadsThenSweepLeaveNoOrphansAndNoDamage 2>&1 | grep -E "^s3 sweep:|error:|Executed .* tests?" | tail -n 4
end=${EPOCHREALTIME//[!0-9]/}
echo "time: $(( (end - start) / 1000000 )) s"
