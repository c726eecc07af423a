"""Algorithms on circuits: closed-form complete and general reasons, prime implicants and
implicates (sufficient / necessary reasons), snr / ssr, robustness, shortest flips and general
sufficient / necessary reasons (Ji and Darwiche, 2026 [JD26]; Darwiche and Ji, 2022 [DJ22])."""

from rfexplain.circuit.logic.closed_forms import complete_reason, general_reason
from rfexplain.circuit.logic.flips import gnrs, scnf, sgnr
from rfexplain.circuit.logic.general import false_projections, find_world, maximal_boxes
from rfexplain.circuit.logic.implicants import holds, minimal_sets, prime_implicants, prime_implicates, robustness, snr, ssr

__all__ = [
    "complete_reason",
    "general_reason",
    "prime_implicants",
    "prime_implicates",
    "robustness",
    "snr",
    "ssr",
    "holds",
    "minimal_sets",
    "scnf",
    "sgnr",
    "gnrs",
    "false_projections",
    "maximal_boxes",
    "find_world",
]
