#!/bin/bash
# Queues the sharded batch job and its merge, which waits for every shard to succeed:
#   deploy/slurm/submit.sh            (in the directory holding prompts.jsonl and models/)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
array=$(sbatch --parsable "$here/lpx-batch-shards.sbatch")
array=${array%%;*}  # "JOBID;CLUSTER" on federated clusters
# A failed shard makes the dependency unsatisfiable: cancel the merge rather than leave it pending.
merge=$(sbatch --parsable --dependency="afterok:${array}" --kill-on-invalid-dep=yes \
  "$here/lpx-batch-merge.sbatch")
echo "shards: job ${array}; merge: job ${merge%%;*} (starts when every shard succeeded)"
