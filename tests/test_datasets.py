"""Datasets: scikit-learn's bundled ones, the benchmark suite shipped with the package and the CSV format."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rfexplain import UnknownDatasetError, datasets


@pytest.mark.parametrize(
    "name, rows, classes", [("iris", 150, 3), ("wine", 178, 3), ("breast_cancer", 569, 2), ("digits", 1797, 10)]
)
def test_builtin(name: str, rows: int, classes: int) -> None:
    data = datasets.load(name)
    assert data.X.shape[0] == rows == len(data.y)
    assert len(data.class_names) == classes
    assert set(np.unique(data.y).tolist()) == set(data.class_names)
    assert len(data.feature_names) == data.X.shape[1]


def test_csv_format(tmp_path: Path) -> None:
    (tmp_path / "toy.csv").write_text("a,b,label\n 1.5, 2,  yes\n3,-4.25, no\n1.5,2, yes\n")
    data = datasets.load("toy", tmp_path)
    assert data.feature_names == ("a", "b")
    assert data.X.tolist() == [[1.5, 2.0], [3.0, -4.25], [1.5, 2.0]]
    assert data.y.tolist() == ["yes", "no", "yes"]
    assert data.class_names == ("no", "yes")


def test_csv_numeric_labels_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "nums.csv").write_text("x,target\n0.1,2\n0.2,1\n")
    monkeypatch.setenv("RFEXPLAIN_DATA", str(tmp_path))
    data = datasets.load("nums")
    assert data.y.tolist() == [2, 1] and data.class_names == (1, 2)
    assert "nums" in datasets.available()


def test_unknown_dataset_lists_available(tmp_path: Path) -> None:
    with pytest.raises(
        UnknownDatasetError, match=r"dataset must be one of \['iris', 'wine', 'breast_cancer', 'digits'.*Got 'nope'"
    ):
        datasets.load("nope", tmp_path)


def test_benchmark_suite_loads_without_any_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    """The 19 benchmark datasets ship with the package: no data_dir, no RFEXPLAIN_DATA."""
    monkeypatch.delenv("RFEXPLAIN_DATA", raising=False)
    assert datasets.find_data_dir() == datasets.benchmark_dir()
    for name in ("ionosphere", "ann-thyroid"):
        data = datasets.load(name)
        assert data.name == name and data.X.ndim == 2 and len(data.class_names) >= 2
    assert datasets.load("ionosphere").class_names == ("b", "g")
    assert set(datasets.benchmark_names()) <= set(datasets.available())
    # the suite's own iris (its labels capitalised) is asked for by its folder; "iris" alone is scikit-learn's
    assert datasets.load("iris", datasets.benchmark_dir()).class_names == ("Setosa", "Versicolor", "Virginica")
    assert datasets.load("iris").class_names == ("setosa", "versicolor", "virginica")
    samples = datasets.load_samples("ecoli")
    assert samples is not None and samples.shape[1] == datasets.load("ecoli").X.shape[1]
    assert datasets.load_samples("iris") is None  # scikit-learn's iris has no sample instances


def test_a_folder_given_overrides_the_builtin_copy(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("RFEXPLAIN_DATA", raising=False)
    (tmp_path / "ecoli.csv").write_text("a,b,label\n1,2,x\n3,4,y\n")
    (tmp_path / "samples").mkdir()
    (tmp_path / "samples" / "ecoli.samples").write_text("1,2\n")
    assert datasets.load("ecoli", tmp_path).X.shape == (2, 2)
    assert datasets.load_samples("ecoli", tmp_path).tolist() == [[1.0, 2.0]]  # type: ignore[union-attr]
    monkeypatch.setenv("RFEXPLAIN_DATA", str(tmp_path))
    assert datasets.load("ecoli").X.shape == (2, 2)
    assert datasets.load("banknote").X.shape == (1372, 4)  # not in the folder: the built-in copy


def test_a_missing_folder_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A folder given that does not exist is an error naming it, not a silent fallback."""
    monkeypatch.delenv("RFEXPLAIN_DATA", raising=False)
    missing = tmp_path / "absent"
    with pytest.raises(datasets.DataDirError, match=r"absent.*\(data_dir\) does not exist.*RFEXPLAIN_DATA"):
        datasets.load("ecoli", missing)
    monkeypatch.setenv("RFEXPLAIN_DATA", str(missing))
    with pytest.raises(UnknownDatasetError, match=r"absent.*\(RFEXPLAIN_DATA\) does not exist"):
        datasets.load("ecoli")
    assert datasets.load("iris").X.shape == (150, 4)  # scikit-learn's bundled data need no folder


def test_gzipped_csv(tmp_path: Path) -> None:
    import gzip

    with gzip.open(tmp_path / "toy.csv.gz", "wt") as handle:
        handle.write("a,b,label\n1,2,yes\n3,4,no\n")
    assert datasets.read_csv(tmp_path / "toy.csv.gz").X.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert datasets.load("toy", tmp_path).class_names == ("no", "yes")
    assert "toy" in datasets.available(tmp_path)


def test_read_csv_optional_header_and_label(tmp_path: Path) -> None:
    plain = tmp_path / "plain.csv"
    plain.write_text("1, 2\n3,4\n")
    table = datasets.read_csv(plain, 2)
    assert table.header is None and table.labels is None and table.X.tolist() == [[1, 2], [3, 4]]
    labelled = tmp_path / "labelled.csv"
    labelled.write_text('"a","b","y"\n1,2,"u"\n3,4, v\n')
    table = datasets.read_csv(labelled, 2)
    assert table.header == ("a", "b", "y") and table.labels == ("u", "v")
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("1,2\n3\n")
    with pytest.raises(datasets.CSVFormatError, match="row 2 has 1 columns"):
        datasets.read_csv(ragged, 2)
    words = tmp_path / "words.csv"
    words.write_text("1,2\n3,x\n")
    with pytest.raises(ValueError, match="row 2 has a non-numeric feature"):
        datasets.read_csv(words, 2)
    with pytest.raises(datasets.CSVFormatError, match="no such file"):
        datasets.read_csv(tmp_path / "none.csv", 2)


def test_train_forest_is_the_usual_recipe() -> None:
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.model_selection import train_test_split

    trained = datasets.train_forest("iris", trees=4, depth=3, seed=1, test_size=0.25)
    data = datasets.load("iris")
    X_train, X_test, y_train, _ = train_test_split(data.X, data.y, test_size=0.25, random_state=1)
    model = RandomForestClassifier(n_estimators=4, max_depth=3, random_state=1).fit(X_train, y_train)
    assert np.array_equal(trained.X_test, X_test) and np.array_equal(trained.y_train, y_train)
    assert np.array_equal(trained.model.predict_proba(data.X), model.predict_proba(data.X))
    assert trained.forest.n_trees == 4 and trained.forest.feature_names == data.feature_names
    whole = datasets.train_forest(data, trees=2, depth=2)
    assert len(whole.X_train) == 150 and len(whole.X_test) == 0
    with pytest.raises(datasets.TrainingOptionError):
        datasets.train_forest("iris", trees=0, depth=2)
    with pytest.raises(ValueError, match="test_size"):
        datasets.train_forest("iris", trees=1, depth=2, test_size=1.5)


def test_command_line_explains_a_benchmark_row_without_any_folder(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``rfexplain explain --dataset ann-thyroid --index 0`` answers on a fresh install."""
    from rfexplain.cli import main

    monkeypatch.delenv("RFEXPLAIN_DATA", raising=False)
    assert main(["explain", "--dataset", "ann-thyroid", "--index", "0", "--trees", "5", "--depth", "3"]) == 0
    assert capsys.readouterr().out.startswith("prediction: ")
    assert main(["explain", "--dataset", "no-such-data", "--index", "0"]) == 2
    assert "dataset must be one of" in capsys.readouterr().err
