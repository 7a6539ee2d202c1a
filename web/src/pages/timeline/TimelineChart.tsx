import { useEffect, useRef, useState } from 'react';
import { Link } from '../../lib/router.tsx';
import { extent, type Lane } from './lanes.ts';

const LABEL_W = 220;
/** Labels are drawn at this size, unscaled (the SVG is laid out at its pixel size). */
export const TIMELINE_FONT_PX = 11;
const LANE_MIN = 14;
const LANE_MAX = 24;
const AXIS_H = 20;
const TICKS = 8;

const span = (ms: number) =>
  ms < 1000
    ? `${Math.round(ms)} ms`
    : ms < 120_000
      ? `${(ms / 1000).toFixed(1)} s`
      : `${(ms / 60_000).toFixed(1)} min`;

/**
 * One lane per session over time, as Temporal's timeline draws a workflow's activities:
 * state spans as bars, inputs (turn starts) as ticks, outputs as dots, signals as diamonds.
 * Lanes shrink (down to 14 px, labels stay 11 px) so a tree of 50 fits the height given.
 */
export function TimelineChart({ lanes, now, height }: { lanes: Lane[]; now: number; height: number }) {
  const box = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(1200);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const ro = new ResizeObserver(() => setWidth(el.clientWidth));
    ro.observe(el);
    setWidth(el.clientWidth);
    return () => ro.disconnect();
  }, []);
  const laneH = Math.max(
    LANE_MIN,
    Math.min(LANE_MAX, Math.floor((height - AXIS_H) / Math.max(1, lanes.length))),
  );
  const { t0, t1 } = extent(lanes, now);
  const plotW = Math.max(100, width - LABEL_W - 8);
  const x = (t: number) => LABEL_W + ((t - t0) / (t1 - t0)) * plotW;
  const h = AXIS_H + lanes.length * laneH;
  return (
    <div ref={box} className="timeline-box">
      <svg
        width={width}
        height={h}
        className="timeline"
        data-testid="timeline"
        role="img"
        aria-label="Timeline"
      >
        {Array.from({ length: TICKS + 1 }, (_, i) => t0 + ((t1 - t0) * i) / TICKS).map((t) => {
          return (
            <g key={t}>
              <line x1={x(t)} x2={x(t)} y1={AXIS_H - 4} y2={h} className="tl-grid" />
              <text x={x(t) + 2} y={AXIS_H - 7} className="tl-axis" fontSize={TIMELINE_FONT_PX}>
                +{span(t - t0)}
              </text>
            </g>
          );
        })}
        {lanes.map((l, i) => {
          const y = AXIS_H + i * laneH;
          const mid = y + laneH / 2;
          return (
            <g key={l.session.id} className="tl-lane" data-lane={l.session.id}>
              {i % 2 ? <rect x={0} y={y} width={width} height={laneH} className="tl-stripe" /> : null}
              {l.spans.map((s) => (
                <rect
                  key={`${s.from}-${s.state}`}
                  x={x(s.from)}
                  y={y + 3}
                  width={Math.max(1, x(s.to) - x(s.from))}
                  height={laneH - 6}
                  className={`tl-span tl-${s.state}`}
                >
                  <title>{`${s.state} · ${span(s.to - s.from)}`}</title>
                </rect>
              ))}
              {l.marks.map((m) =>
                m.kind === 'input' ? (
                  <line
                    key={m.seq}
                    x1={x(m.at)}
                    x2={x(m.at)}
                    y1={y + 1}
                    y2={y + laneH - 1}
                    className="tl-input"
                  >
                    <title>{`input: ${m.text}`}</title>
                  </line>
                ) : m.kind === 'output' ? (
                  <circle key={m.seq} cx={x(m.at)} cy={mid} r={3} className="tl-output">
                    <title>{`output: ${m.text}`}</title>
                  </circle>
                ) : (
                  <path key={m.seq} d={`M${x(m.at)},${mid - 4}l4,4l-4,4l-4,-4z`} className="tl-signal">
                    <title>{`signal: ${m.text}`}</title>
                  </path>
                ),
              )}
              <foreignObject x={0} y={y} width={LABEL_W - 6} height={laneH}>
                <div
                  className="tl-label"
                  style={{ paddingLeft: 4 + Math.min(l.depth, 10) * 8, lineHeight: `${laneH}px` }}
                >
                  <Link to={`/sessions/${l.session.id}`}>{l.session.title ?? l.session.id}</Link>
                </div>
              </foreignObject>
            </g>
          );
        })}
      </svg>
    </div>
  );
}
