"""The verifiers taskset id `traineebench` (`vf-eval traineebench`).

verifiers imports a taskset by its id as a top-level module and takes the Taskset,
Harness and Env subclasses this module exports; they live in `tbsim.verifiers`
(`pip install "tbsim[verifiers]"`)."""

from tbsim.verifiers import (
    TraineeBenchEnv,
    TraineeBenchEnvConfig,
    TraineeBenchHarness,
    TraineeBenchHarnessConfig,
    TraineeBenchTaskset,
    TraineeBenchTasksetConfig,
    load_environment,
)

__all__ = [
    "TraineeBenchEnv",
    "TraineeBenchEnvConfig",
    "TraineeBenchHarness",
    "TraineeBenchHarnessConfig",
    "TraineeBenchTaskset",
    "TraineeBenchTasksetConfig",
    "load_environment",
]
