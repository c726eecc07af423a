"""numpy scalars to plain Python values: the one conversion used wherever a label or a number
leaves the package (JSON documents, batch records, the command line's output).

>>> import numpy as np
>>> to_python(np.int64(3)), to_python(np.str_("setosa")), to_python("kept")
(3, 'setosa', 'kept')
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["to_python"]


def to_python(value: Any) -> Any:
    """``value`` as a Python scalar if it is a numpy scalar, else unchanged."""
    return value.item() if isinstance(value, np.generic) else value
