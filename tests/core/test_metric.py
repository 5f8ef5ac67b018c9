"""Evaluation metrics against scikit-learn, SciPy and hand-computed values."""
import json
import math

import numpy as np
import pytest
from sklearn import metrics as skm

from core import metric, nd


def _batches(seed=0, n=3, size=20, classes=2):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        scores = rng.random((size, classes))
        probs = scores / scores.sum(axis=1, keepdims=True)
        out.append((rng.integers(0, classes, size), probs))
    return out


def test_gluon_metric_is_core_metric():
    from gluon import metric as gmetric

    assert gmetric.Accuracy is metric.Accuracy and gmetric.create is metric.create


def test_accuracy_matches_sklearn_over_batches():
    m = metric.Accuracy()
    batches = _batches(classes=4)
    for label, probs in batches:
        m.update([nd.array(label)], [nd.array(probs)])
    labels = np.concatenate([b[0] for b in batches])
    preds = np.concatenate([b[1].argmax(1) for b in batches])
    assert m.get() == ("accuracy", pytest.approx(skm.accuracy_score(labels, preds)))
    # class indices as predictions, NumPy inputs, single arrays
    m2 = metric.Accuracy()
    m2.update(labels, preds)
    assert m2.get()[1] == pytest.approx(skm.accuracy_score(labels, preds))


def test_accuracy_axis():
    m = metric.Accuracy(axis=0)
    m.update([np.array([1, 0])], [np.array([[0.1, 0.9], [0.8, 0.2]])])
    assert m.get()[1] == 1.0


def test_top_k_accuracy_matches_sklearn():
    rng = np.random.default_rng(1)
    label = rng.integers(0, 6, 50)
    scores = rng.random((50, 6))
    m = metric.TopKAccuracy(top_k=3)
    m.update([nd.array(label)], [nd.array(scores)])
    assert m.name == "top_k_accuracy_3"
    want = skm.top_k_accuracy_score(label, scores, k=3, labels=np.arange(6))
    assert m.get()[1] == pytest.approx(want)
    with pytest.raises(ValueError):
        metric.TopKAccuracy(top_k=1)


@pytest.mark.parametrize("average", ["macro", "micro"])
def test_f1_matches_sklearn(average):
    batches = _batches(2)
    m = metric.F1(average=average)
    for label, probs in batches:
        m.update([nd.array(label)], [nd.array(probs)])
    if average == "macro":
        want = np.mean([skm.f1_score(lab, p.argmax(1)) for lab, p in batches])
    else:
        want = skm.f1_score(np.concatenate([b[0] for b in batches]),
                            np.concatenate([b[1].argmax(1) for b in batches]))
    assert m.get() == ("f1", pytest.approx(want))


@pytest.mark.parametrize("average", ["macro", "micro"])
def test_mcc_matches_sklearn(average):
    batches = _batches(3)
    m = metric.MCC(average=average)
    for label, probs in batches:
        m.update([nd.array(label)], [nd.array(probs)])
    if average == "macro":
        want = np.mean([skm.matthews_corrcoef(lab, p.argmax(1)) for lab, p in batches])
    else:
        want = skm.matthews_corrcoef(np.concatenate([b[0] for b in batches]),
                                     np.concatenate([b[1].argmax(1) for b in batches]))
    assert m.get()[1] == pytest.approx(want)


def test_binary_metrics_refuse_more_classes():
    with pytest.raises(ValueError, match="binary"):
        metric.F1().update([np.array([0, 1, 2])], [np.eye(3)])


def test_pcc_matches_sklearn_multiclass():
    rng = np.random.default_rng(4)
    label = rng.integers(0, 4, 60)
    scores = rng.random((60, 4))
    m = metric.PCC()
    m.update([nd.array(label[:30])], [nd.array(scores[:30])])
    m.update([nd.array(label[30:])], [nd.array(scores[30:])])
    want = skm.matthews_corrcoef(label, scores.argmax(1))
    assert m.get()[1] == pytest.approx(want)


def test_regression_metrics_match_sklearn():
    rng = np.random.default_rng(5)
    pairs = [(rng.normal(size=10), rng.normal(size=10)) for _ in range(3)]
    for cls, fn in ((metric.MAE, skm.mean_absolute_error), (metric.MSE, skm.mean_squared_error),
                    (metric.RMSE, lambda a, b: math.sqrt(skm.mean_squared_error(a, b)))):
        m = cls()
        for label, pred in pairs:
            m.update([nd.array(label)], [nd.array(pred.reshape(10, 1))])
        # the mean of the per-batch values, as MXNet
        want = np.mean([fn(label, pred) for label, pred in pairs])
        assert m.get()[1] == pytest.approx(want, rel=1e-6), cls.__name__


@pytest.mark.parametrize("cls,name", [(metric.CrossEntropy, "cross-entropy"),
                                      (metric.NegativeLogLikelihood, "nll-loss")])
def test_cross_entropy_matches_sklearn_log_loss(cls, name):
    batches = _batches(6, classes=3)
    m = cls()
    for label, probs in batches:
        m.update([nd.array(label)], [nd.array(probs)])
    labels = np.concatenate([b[0] for b in batches])
    probs = np.concatenate([b[1] for b in batches])
    assert m.get() == (name, pytest.approx(skm.log_loss(labels, probs, labels=[0, 1, 2]),
                                           rel=1e-5))


def test_perplexity_with_ignore_label():
    label = np.array([0, 1, 1, 2])
    probs = np.array([[0.3, 0.7, 0.0], [0.0, 1.0, 0.0], [0.4, 0.6, 0.0], [0.2, 0.3, 0.5]])
    m = metric.Perplexity(ignore_label=2)
    m.update([nd.array(label)], [nd.array(probs)])
    assert m.get()[1] == pytest.approx(math.exp(-(math.log(0.3) + math.log(0.6)) / 3), rel=1e-6)
    m = metric.Perplexity(ignore_label=None)
    m.update([nd.array(label)], [nd.array(probs)])
    want = math.exp(-(math.log(0.3) + math.log(0.6) + math.log(0.5)) / 4)
    assert m.get()[1] == pytest.approx(want, rel=1e-6)


@pytest.mark.parametrize("average", ["macro", "micro"])
def test_pearson_correlation(average):
    rng = np.random.default_rng(7)
    pairs = [(rng.normal(size=(5, 2)), rng.normal(size=(5, 2))) for _ in range(3)]
    m = metric.create("pearsonr", average=average)
    for label, pred in pairs:
        m.update([nd.array(label)], [nd.array(pred)])
    if average == "macro":
        want = np.mean([np.corrcoef(p.ravel(), lab.ravel())[0, 1] for lab, p in pairs])
    else:
        want = np.corrcoef(np.concatenate([p.ravel() for _, p in pairs]),
                           np.concatenate([lab.ravel() for lab, _ in pairs]))[0, 1]
    assert m.get()[1] == pytest.approx(want, rel=1e-5)


def test_loss_and_custom_metrics():
    m = metric.Loss()
    m.update(None, [nd.array([1.0, 2.0]), nd.array([3.0, 6.0])])
    assert m.get() == ("loss", 3.0)
    c = metric.CustomMetric(lambda label, pred: (float(np.sum(label == pred)), label.size),
                            name="hits")
    c.update([nd.array([1, 2, 3])], [nd.array([1, 0, 3])])
    assert c.get() == ("hits", pytest.approx(2 / 3))
    extra = metric.np(lambda label, pred: 1.0, allow_extra_outputs=True)
    extra.update([np.zeros(2)], [np.zeros(2), np.zeros(3)])
    assert extra.get() == ("custom(<lambda>)", 1.0)
    with pytest.raises(NotImplementedError):
        c.get_config()


def test_local_and_global_tallies():
    m = metric.Accuracy()
    assert math.isnan(m.get()[1])
    m.update([np.array([1, 1])], [np.array([1, 0])])
    m.reset_local()
    assert math.isnan(m.get()[1])
    m.update([np.array([1, 1])], [np.array([1, 1])])
    assert m.get()[1] == 1.0 and m.get_global()[1] == 0.75
    assert m.get_name_value() == [("accuracy", 1.0)]
    assert m.get_global_name_value() == [("accuracy", 0.75)]
    m.reset()
    assert math.isnan(m.get_global()[1])


def test_composite_and_create_forms():
    label, probs = _batches(8)[0]
    comp = metric.create(["acc", metric.F1(), "ce", lambda lab, pred: 0.5])
    assert isinstance(comp, metric.CompositeEvalMetric)
    comp.update([nd.array(label)], [nd.array(probs)])
    names, values = comp.get()
    assert names == ["accuracy", "f1", "cross-entropy", "custom(<lambda>)"]
    assert values[0] == pytest.approx(skm.accuracy_score(label, probs.argmax(1)))
    assert values[3] == 0.5
    assert comp.get_metric(1).name == "f1"
    with pytest.raises(ValueError):
        comp.get_metric(10)
    assert comp.get_global()[0] == names
    comp.reset_local()
    assert all(math.isnan(v) for v in comp.get()[1])
    for spec in ("ACC", "top_k_acc", "nll_loss", "composite", "mae"):
        kwargs = {"top_k": 2} if spec == "top_k_acc" else {}
        assert isinstance(metric.create(spec, **kwargs), metric.EvalMetric)
    acc = metric.Accuracy(axis=0, name="a0")
    again = metric.create(acc.get_config())
    assert isinstance(again, metric.Accuracy) and again.axis == 0 and again.name == "a0"
    assert metric.create(json.dumps(["acc", {"axis": 0}])).axis == 0
    assert metric.create(acc) is acc
    with pytest.raises(ValueError, match="not registered"):
        metric.create("nope")


def test_update_dict_selects_by_name():
    m = metric.Accuracy(output_names=["out"], label_names=["lab"])
    m.update_dict({"lab": np.array([1, 0]), "other": np.array([5, 5])},
                  {"out": np.array([1, 1]), "aux": np.array([0, 0])})
    assert m.get()[1] == 0.5


def test_mismatched_lists_raise():
    with pytest.raises(ValueError, match="does not match"):
        metric.Accuracy().update([np.array([1])], [np.array([1]), np.array([0])])
