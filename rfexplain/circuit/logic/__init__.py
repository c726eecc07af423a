"""Algorithms on circuits: closed-form complete and general reasons, prime implicants and
implicates (sufficient / necessary reasons), shortest prime implicants / implicates (the papers'
ssr / snr), robustness, shortest flips and general sufficient / necessary reasons (Ji and
Darwiche, 2026 [JD26]; Darwiche and Ji, 2022 [DJ22]).

The short names ``snr``, ``ssr``, ``scnf``, ``sgnr`` and ``gnrs`` are deprecated aliases of
:func:`shortest_prime_implicates`, :func:`shortest_prime_implicants`, :func:`cnf_within_varsets`,
:func:`shortest_general_necessary_reasons` and :func:`general_necessary_reasons`, kept for one
release.
"""

from rfexplain.circuit.logic.closed_forms import complete_reason, general_reason
from rfexplain.circuit.logic.flips import (
    cnf_within_varsets,
    general_necessary_reasons,
    gnrs,
    scnf,
    sgnr,
    shortest_general_necessary_reasons,
)
from rfexplain.circuit.logic.general import false_projections, find_world, maximal_boxes
from rfexplain.circuit.logic.implicants import (
    holds,
    minimal_sets,
    prime_implicants,
    prime_implicates,
    robustness,
    shortest_prime_implicants,
    shortest_prime_implicates,
    snr,
    ssr,
)

__all__ = [
    "complete_reason",
    "general_reason",
    "prime_implicants",
    "prime_implicates",
    "robustness",
    "shortest_prime_implicates",
    "shortest_prime_implicants",
    "holds",
    "minimal_sets",
    "cnf_within_varsets",
    "shortest_general_necessary_reasons",
    "general_necessary_reasons",
    "false_projections",
    "maximal_boxes",
    "find_world",
    # deprecated aliases, kept for one release
    "snr",
    "ssr",
    "scnf",
    "sgnr",
    "gnrs",
]
