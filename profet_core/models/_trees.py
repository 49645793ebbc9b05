"""Fitted scikit-learn trees as flat numpy arrays: the one tree evaluator of profet_core.

Forests, gradient boosting and the multi-output breakdown forest all predict through
:class:`FlatTrees`, so artifacts hold plain arrays (no pickle) and prediction needs numpy only.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

#: Array names of the state, in :meth:`FlatTrees.state` order.
TREE_ARRAYS = ("left", "right", "feature", "threshold", "value", "roots")
#: Rows evaluated at once: bounds the (rows x trees) index temporaries (~40 MB per array).
_CHUNK = 8192
#: From this many rows, the trees are rebuilt as scikit-learn trees and walked by its compiled
#: code (importing scikit-learn costs ~0.6 s, worth it only for large tables).
_COMPILED_MIN_ROWS = 1000
#: Rows each compiled walk takes at once (~600 KB of float32 features: about the core's L2 cache).
_APPLY_ROWS = 8192
#: Rows from which the trees are walked in threads.
_THREADED_MIN_ROWS = 20_000


class FlatTrees:
    """Trees of one ensemble with global node ids; a leaf points at itself.

    Parameters
    ----------
    arrays : dict of str to ndarray
        :data:`TREE_ARRAYS`; ``value`` has shape (n_nodes,) or (n_nodes, n_outputs).
    depth : int
        Depth of the deepest tree (traversal runs this many fixed steps).
    """

    def __init__(self, arrays: dict, depth: int, n_features: int | None = None):
        self.arrays = {k: np.asarray(arrays[k]) for k in TREE_ARRAYS}
        value = self.arrays["value"]
        self.arrays["value"] = value[:, None] if value.ndim == 1 else value
        if int(depth) < 0:
            raise ValueError(f"tree depth {depth!r} is negative")
        # From the arrays themselves: a stored depth too small would stop walks at inner nodes.
        self.depth = check_trees(self.arrays, n_features)
        inner = self.arrays["left"] != np.arange(len(self.arrays["left"]))
        self._n_features = int(self.arrays["feature"][inner].max()) + 1 if inner.any() else 0

    @classmethod
    def from_sklearn(cls, trees) -> FlatTrees:
        """Flatten ``sklearn.tree._tree.Tree`` objects (e.g. ``[e.tree_ for e in forest]``)."""
        parts = {k: [] for k in TREE_ARRAYS}
        offset = 0
        for tree in trees:
            is_leaf = tree.children_left < 0
            ids = np.arange(tree.node_count) + offset
            parts["roots"].append([offset])
            parts["left"].append(np.where(is_leaf, ids, tree.children_left + offset))
            parts["right"].append(np.where(is_leaf, ids, tree.children_right + offset))
            parts["feature"].append(np.where(is_leaf, 0, tree.feature))
            parts["threshold"].append(np.where(is_leaf, np.inf, tree.threshold))
            parts["value"].append(tree.value[:, :, 0])
            offset += tree.node_count
        arrays = {k: np.concatenate(v) for k, v in parts.items()}
        for k in ("left", "right", "feature", "roots"):
            arrays[k] = arrays[k].astype(np.int32)
        arrays["threshold"] = arrays["threshold"].astype(np.float64)
        arrays["value"] = arrays["value"].astype(np.float64)
        return cls(arrays, max(t.max_depth for t in trees))

    def state(self, squeeze: bool = False) -> dict:
        """The arrays to store; ``squeeze`` writes a single output as shape (n_nodes,)."""
        out = dict(self.arrays)
        if squeeze and out["value"].shape[1] == 1:
            out["value"] = out["value"][:, 0]
        return out

    def sum_leaves(self, X) -> np.ndarray:
        """Sum over the trees of the leaf value each row reaches: shape (n_rows, n_outputs).

        (Forests divide it by the number of trees, boosting scales it by the learning rate.)
        """
        X = np.asarray(X, dtype=np.float32).astype(np.float64)
        X = X.reshape(1, -1) if X.ndim == 1 else X
        if X.shape[1] < self._n_features:
            raise ValueError(f"the trees split on {self._n_features} features; X has {X.shape[1]}")
        if len(X) >= _COMPILED_MIN_ROWS:
            return self._compiled_sum(X)
        return self.leaves(X).sum(axis=1)

    @property
    def n_trees(self) -> int:
        return len(self.arrays["roots"])

    def leaves(self, X) -> np.ndarray:
        """Leaf values reached by each row in each tree: shape (n_rows, n_trees, n_outputs)."""
        a = self.arrays
        # Trees compare float32 inputs with their thresholds; cast the same way to match exactly.
        X = np.asarray(X, dtype=np.float32).astype(np.float64)
        X = X.reshape(1, -1) if X.ndim == 1 else X
        if X.shape[1] < self._n_features:
            raise ValueError(f"the trees split on {self._n_features} features; X has {X.shape[1]}")
        n_trees = len(a["roots"])
        out = np.empty((len(X), n_trees, a["value"].shape[1]))
        for start in range(0, len(X), _CHUNK):
            xs = X[start : start + _CHUNK]
            # One entry per (row, tree); each step moves only the entries not yet at a leaf,
            # so the work follows the paths' mean depth, not the deepest tree's.
            node = np.tile(a["roots"], len(xs))
            flat = xs.ravel()
            base = np.repeat(np.arange(len(xs)) * xs.shape[1], n_trees)
            active = np.arange(node.size)
            for _ in range(self.depth):
                nd = node[active]
                go_left = flat[base[active] + a["feature"][nd]] <= a["threshold"][nd]
                nxt = np.where(go_left, a["left"][nd], a["right"][nd])
                node[active] = nxt
                active = active[a["left"][nxt] != nxt]
                if not active.size:
                    break
            out[start : start + len(xs)] = a["value"][node].reshape(len(xs), n_trees, -1)
        return out

    def _sklearn_trees(self) -> list:
        """The trees as ``sklearn.tree._tree.Tree`` objects (built once, then reused)."""
        if getattr(self, "_sk", None) is None:
            from sklearn.tree._tree import NODE_DTYPE, Tree

            a, trees = self.arrays, []
            n_features = int(a["feature"].max()) + 1
            bounds = [*a["roots"].tolist(), len(a["left"])]
            for start, stop in zip(bounds[:-1], bounds[1:], strict=True):
                ids = np.arange(start, stop)
                leaf = a["left"][start:stop] == ids
                nodes = np.zeros(stop - start, dtype=NODE_DTYPE)
                nodes["left_child"] = np.where(leaf, -1, a["left"][start:stop] - start)
                nodes["right_child"] = np.where(leaf, -1, a["right"][start:stop] - start)
                nodes["feature"] = np.where(leaf, -2, a["feature"][start:stop])
                nodes["threshold"] = np.where(leaf, -2.0, a["threshold"][start:stop])
                tree = Tree(n_features, np.ones(1, dtype=np.intp), a["value"].shape[1])
                values = np.ascontiguousarray(a["value"][start:stop, :, None])
                state = {"max_depth": self.depth, "node_count": stop - start}
                tree.__setstate__({**state, "nodes": nodes, "values": values})
                trees.append((start, tree))
            self._sk = trees
        return self._sk

    def _compiled_sum(self, X: np.ndarray) -> np.ndarray:
        X32 = np.ascontiguousarray(X, dtype=np.float32)
        value = self.arrays["value"]
        trees = self._sklearn_trees()
        workers = min(len(trees), os.cpu_count() or 1, 8)
        threaded = workers >= 2 and len(X) >= _THREADED_MIN_ROWS
        # Trees summed in `workers` interleaved groups, then the groups in order: the rounding of
        # the sum (and so every digit of the output) stays what it was when threads took groups.
        groups = [trees[i::workers] for i in range(workers)] if threaded else [trees]
        single = value.shape[1] == 1
        leaf = value[:, 0] if single else value

        def block(start: int) -> np.ndarray:
            # Every tree walks one block of rows while it is in the core's cache: walking the
            # whole table tree by tree reads it from memory once per tree (2x slower).
            xs = X32[start : start + _APPLY_ROWS]
            out = None
            for group in groups:
                total = np.zeros((len(xs),) if single else (len(xs), value.shape[1]))
                for first, tree in group:
                    total += leaf[first + tree.apply(xs)]
                out = total if out is None else out + total
            return out

        starts = range(0, len(X), _APPLY_ROWS)
        if threaded:
            # Tree.apply releases the GIL: a 200,000-row table walks its trees on every core.
            with ThreadPoolExecutor(workers) as pool:
                parts = list(pool.map(block, starts))
        else:
            parts = [block(start) for start in starts]
        out = np.concatenate(parts) if parts else np.zeros((0, value.shape[1]))
        return out[:, None] if single else out


def _tree_ends(roots: np.ndarray, n: int) -> np.ndarray:
    """For each node, the id one past the last node of its tree."""
    bounds = np.append(roots, n)
    return np.repeat(bounds[1:], np.diff(bounds))


def check_trees(a: dict, n_features: int | None = None) -> int:
    """Check flat tree arrays before any walk; return the depth of the deepest tree.

    Every array has one entry per node (``value`` finite floats); the roots start at 0 and
    increase; a node is a leaf (both children itself) or has both children after it and inside
    its own tree, so every walk ends (no cycle) and no index leaves the arrays; split features
    lie in ``[0, n_features)``.

    Raises
    ------
    ValueError
        Naming the first thing wrong.
    """
    n = len(a["left"])
    for k in ("left", "right", "feature", "roots", "threshold"):
        kind = "f" if k == "threshold" else "iu"
        if a[k].ndim != 1 or a[k].dtype.kind not in kind or (k != "roots" and len(a[k]) != n):
            raise ValueError(f"tree array {k!r} must be 1-D {'floats' if kind == 'f' else 'ints'}")
    value = a["value"]
    if value.ndim != 2 or len(value) != n or value.dtype.kind != "f":
        raise ValueError("tree array 'value' must hold one float row per node")
    if not np.isfinite(value).all():
        raise ValueError("tree array 'value' holds NaN or infinity")
    roots = a["roots"].astype(np.int64)
    if not n or not len(roots) or roots[0] != 0 or (np.diff(roots) <= 0).any() or roots[-1] >= n:
        raise ValueError("tree roots must start at node 0 and increase inside the node arrays")
    ids, end = np.arange(n), _tree_ends(roots, n)
    left, right = a["left"].astype(np.int64), a["right"].astype(np.int64)
    leaf = left == ids
    if (leaf != (right == ids)).any():
        raise ValueError("a tree node has one child")
    inner = ~leaf
    ok = (left > ids) & (left < end) & (right > ids) & (right < end)
    if (inner & ~ok).any():
        node = int(np.argmax(inner & ~ok))
        raise ValueError(f"tree node {node} has a child outside its tree or before it (a cycle)")
    feature = a["feature"][inner].astype(np.int64)
    high = n_features if n_features is not None else np.iinfo(np.int64).max
    if feature.size and (feature.min() < 0 or feature.max() >= high):
        raise ValueError(f"a tree splits on a feature outside 0..{high - 1}")
    # Every node but a root is the child of exactly one node (as in every tree scikit-learn
    # grows), so a node's depth is its distance to its root: pointer jumping finds every
    # node's in log2(deepest) passes.
    parent, children = ids.copy(), np.concatenate([left[inner], right[inner]])
    parent[children] = np.concatenate([ids[inner], ids[inner]])
    is_root = np.zeros(n, dtype=bool)
    is_root[roots] = True
    if (np.bincount(children, minlength=n) != ~is_root).any():
        raise ValueError("a tree node is the child of no node or of two (a node has one parent)")
    dist, anc = (parent != ids).astype(np.int64), parent
    while not np.array_equal(up := anc[anc], anc):
        dist, anc = dist + dist[anc], up
    return int(dist.max())
