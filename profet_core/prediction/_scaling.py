"""Scaling answers of the :class:`~profet_core.Predictor`: latency at other batch or input sizes,
from two or three measured points (:meth:`ScalingMixin.scale`) or from one
(:meth:`ScalingMixin.scale_from_point`)."""

from __future__ import annotations

from ..errors import ProfetValueError
from ._store import sub_arrays


class ScalingMixin:
    """Methods of the Predictor that scale a latency to other sizes (uses its bundle and cache)."""

    def scaler(self, target: str | None, by: str):
        """The fitted :class:`CurveScaler` of ``target`` along ``by`` (``"batch"``/``"input"``).

        The default scaler is linear in the work and the same for every instance: ``target``
        None takes the first measured instance's.
        """
        from ..models._curve_scaler import CurveScaler

        target = self.instances[0] if target is None else target
        self._check_instance(target, "target", measured=True)
        if by not in ("batch", "input"):
            raise ProfetValueError(f"scale by {str(by)[:40]!r}; allowed: batch, input")
        meta = self.bundle.model.get("scalers", {}).get(f"{target}|{by}")
        if meta is None:
            raise ProfetValueError(f"the artifacts hold no {by} scaler for {target}")
        arrays = sub_arrays(self.bundle.arrays, f"scaler|{target}|{by}|")
        return self._cached(("scaler", target, by), lambda: CurveScaler.from_state(meta, arrays))

    def scale_warnings(self, by: str, points: dict) -> list[str]:
        """Warnings about measured ``{size: latency_ms}`` points (e.g. a latency that falls as
        the size grows), as the CLI prints and the Scaler page shows them."""
        from ._engine import scale_warnings

        return scale_warnings(by, {float(k): float(v) for k, v in points.items()})

    def scale(
        self,
        target,
        by,
        latency_min_ms,
        latency_max_ms,
        size,
        size_min=None,
        size_max=None,
        points=None,
    ):
        """Latency (ms) at ``size`` from latencies measured at two (or more) sizes.

        Parameters
        ----------
        target : str
            Instance the latencies are for.
        by : {"batch", "input"}
            Scale by batch size or by input image side length (pixels).
        latency_min_ms, latency_max_ms : float
            Latencies (ms, > 0) at ``size_min`` and ``size_max``.
        size : float or array
            Size(s) to predict, within the trained range.
        size_min, size_max : float, optional
            Sizes of the two given latencies (default: the trained range's ends, 16..256 for
            batch and 32..256 for input).
        points : dict of float to float, optional
            More measured points, ``{size: latency_ms}``, strictly between ``size_min`` and
            ``size_max``: the scaler then runs through every point.

        Returns
        -------
        ndarray
            Predicted latency in ms, same shape as ``size``.
        """
        from ._engine import scale_latency

        return scale_latency(
            self.scaler(target, by),
            by,
            latency_min_ms,
            latency_max_ms,
            size,
            size_min,
            size_max,
            points,
        )

    def one_point_scaler(self, by: str, use_profile: bool = True):
        """The fitted :class:`~profet_core.onepoint.OnePointScaler` along ``by``, with or
        without the anchor profile's features."""
        from ..onepoint import OnePointScaler

        if by not in ("batch", "input"):
            raise ProfetValueError(f"scale by {str(by)[:40]!r}; allowed: batch, input")
        name = "profile" if use_profile else "latency"
        meta = self.bundle.model.get("onepoint", {}).get(f"{by}|{name}")
        if meta is None:
            raise ProfetValueError(
                f"the artifacts hold no one-point {by} scaler: retrain them with this version"
            )
        arrays = sub_arrays(self.bundle.arrays, f"onepoint|{by}|{name}|")
        return self._cached(("onepoint", by, name), lambda: OnePointScaler.from_state(meta, arrays))

    def scale_from_point(self, target, by, latency_ms, size_from, size, other_size, profile=None):
        """Latency (ms, with an interval) on ``target`` at other sizes, from one latency there.

        The curve's shape is learned per instance from the training CNNs (every one measured at
        five batch and five input sizes): from the anchor profile's scale-free features when
        ``profile`` is given, else from the latency and the sizes alone.

        Parameters
        ----------
        target : str
            Any instance of :attr:`all_instances`; one never measured at several sizes takes the
            median curve of the measured ones (said in ``notes``).
        by : {"batch", "input"}
        latency_ms : float
            Batch latency (ms, > 0) on ``target`` at ``size_from``: measured, or predicted by
            :meth:`predict` for the profiled size.
        size_from : float
            Batch size (images) or input side length (px) of ``latency_ms``.
        size : float or array of shape (n,)
            Size(s) to predict, within the trained range (16..256 images, 32..256 px).
        other_size : float
            The size held fixed: the input side length (px) when scaling the batch, the batch
            size (images) when scaling the input.
        profile : pandas.DataFrame, optional
            One row of ``Host_*``/``Device_*`` op times (us) taken at ``size_from`` on any
            anchor, as :func:`parse_profile` returns it (a ``steps`` column is honoured).

        Returns
        -------
        PointScale
        """
        from ..onepoint._predict import scale_one_point

        return scale_one_point(self, target, by, latency_ms, size_from, size, other_size, profile)
