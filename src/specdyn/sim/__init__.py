from specdyn.sim.deep_linear import DeepLinearRun, train_deep_linear  # noqa: F401  (issue 6)
from specdyn.sim.langevin import (  # noqa: F401  (issue 8)
    ChaosRun,
    LangevinBlowUp,
    LangevinRun,
    mean_field_langevin,
    propagation_of_chaos,
)
from specdyn.sim.linear import DivergenceError, train_linear  # noqa: F401  (issue 3)
from specdyn.sim.linear_student import (  # noqa: F401  (issue 6)
    LinearStudentRun,
    rank_one_teacher,
    train_linear_student,
)
from specdyn.sim.overlay import theory_agreement, theory_spectra  # noqa: F401  (issue 3)
from specdyn.sim.parameterization import (  # noqa: F401  (issue 4)
    PARAMETERIZATIONS,
    Parameterization,
    get_parameterization,
)
from specdyn.sim.trajectory import Trajectory  # noqa: F401  (issue 3)
from specdyn.sim.two_layer import TrainingDivergedError, train_two_layer  # noqa: F401  (issue 4)
from specdyn.sim.two_step import TwoStepResult, gd_steps, one_step_spike_strength  # noqa: F401  (issue 7)
