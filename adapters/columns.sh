# The compliance matrix's third-party columns, one place for every script
# that walks them (compliance.sh, fuzz-columns.sh): sourced, not run.
# A column whose install script is the same as another's is installed once.
# name | install command | executor command (both relative to the repository root)
COLUMNS=(
  "codex-0.169.0|adapters/envelope-cli/install-codex.sh 0.169.0|adapters/envelope-cli/codex-apply-patch 0.169.0"
  "codex-0.25.0|adapters/envelope-cli/install-codex.sh 0.25.0|adapters/envelope-cli/codex-apply-patch 0.25.0"
  "openai-agents|adapters/openai-agents/install.sh|adapters/openai-agents/openai-agents-apply-diff"
  "agents-core|adapters/agents-core/install.sh|adapters/agents-core/agents-core-apply-patch"
  "cap-disk|adapters/codex-apply-patch-pypi/install.sh|adapters/codex-apply-patch-pypi/codex-apply-patch-disk"
  "cap-memory|adapters/codex-apply-patch-pypi/install.sh|adapters/codex-apply-patch-pypi/codex-apply-patch-memory"
  "apply-patch-py|adapters/apply-patch-py/install.sh|adapters/apply-patch-py/apply-patch-py"
  "cline|adapters/cline/install.sh|adapters/cline/cline-apply-patch"
  "aider|adapters/aider/install.sh|adapters/aider/aider-patch-coder"
  "zenpatch|adapters/zenpatch/install.sh|adapters/zenpatch/zenpatch-apply"
)
