"""Write ``rfexplain/data/loans.csv``: the small synthetic mixed-type table the package ships.

``python -m experiments.make_loans_csv`` regenerates it byte for byte (fixed seed). Each row is a
loan application: age, yearly income, loan amount, years employed (numbers), and employment
type, housing, purpose and credit history (categories); the label ``approved`` comes from a
hand-written scoring rule plus 8% label noise, so a forest has something real to learn and
something to get wrong. It is synthetic: no real person is in it.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "rfexplain" / "data" / "loans.csv"
SEED = 20240611
ROWS = 600


def make_rows(seed: int = SEED, rows: int = ROWS) -> list[dict[str, object]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(rows):
        age = int(rng.integers(19, 75))
        employment = str(rng.choice(["salaried", "self-employed", "unemployed", "retired"], p=[0.6, 0.2, 0.1, 0.1]))
        if age >= 65:
            employment = "retired"
        years = 0 if employment == "unemployed" else int(min(age - 18, rng.gamma(2.0, 4.0)))
        base = {"salaried": 42_000, "self-employed": 48_000, "unemployed": 9_000, "retired": 24_000}[employment]
        income = round(float(base * rng.lognormal(0.0, 0.45)), -2)
        housing = str(rng.choice(["own", "mortgage", "rent"], p=[0.25, 0.4, 0.35]))
        purpose = str(rng.choice(["car", "home", "education", "business", "other"], p=[0.3, 0.2, 0.15, 0.15, 0.2]))
        history = str(rng.choice(["good", "fair", "poor", "none"], p=[0.5, 0.25, 0.15, 0.1]))
        amount = round(float(rng.uniform(1_000, 40_000)), -2)
        score = (
            1.5 * (history == "good")
            + 0.5 * (history == "fair")
            - 1.5 * (history == "poor")
            - 0.5 * (history == "none")
            + 0.8 * (housing == "own")
            + 0.3 * (housing == "mortgage")
            - 1.2 * (employment == "unemployed")
            + 0.04 * years
            + 1.2 * np.log(income / amount)
            - 0.5 * (purpose == "business")
        )
        approved = score > 1.2
        if rng.random() < 0.08:
            approved = not approved
        out.append(
            {
                "age": age,
                "income": income,
                "loan_amount": amount,
                "years_employed": years,
                "employment": employment,
                "housing": housing,
                "purpose": purpose,
                "credit_history": history,
                "approved": "yes" if approved else "no",
            }
        )
    return out


def main() -> None:
    rows = make_rows()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main()
