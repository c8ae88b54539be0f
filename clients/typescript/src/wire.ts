// The service's JSON bodies as openapi.yaml defines them (snake_case, as sent on the wire).
// Read models (experiments, matrices, history) are returned to callers as they arrive; duels and
// interleavings are wrapped in the SDK's own objects (duel.ts, interleaving.ts).

export type ExperimentStatus = "running" | "paused" | "concluded";

export type PolicyName =
  | "interleaved_filter"
  | "beat_the_mean"
  | "rucb"
  | "merge_rucb"
  | "merge_dts"
  | "dts"
  | "rmed1"
  | "self_sparring"
  | "sparring_ucb"
  | "sparring_ts"
  | "sparring_exp3"
  | "doubler"
  | "multi_sbm"
  | "rex3"
  | "uniform"
  | "mdb"
  | "ucb_candidates"
  | "auto";

export interface PolicySpec {
  name: PolicyName;
  params?: Record<string, unknown>;
}

export type InterleavingMethod =
  | "team_draft"
  | "balanced"
  | "probabilistic"
  | "optimized"
  | "team_draft_multileave"
  | "probabilistic_multileave"
  | "sample_only_scored"
  | "pairwise_preference";

export interface InterleavingSettings {
  method: InterleavingMethod;
  options?: Record<string, unknown>;
  max_length?: number | null;
}

/** Browser clicks: the page origins allowed to post clicks with the interleaving token alone. */
export interface BrowserClicksSettings {
  origins: string[];
}

export interface CreateExperimentInput {
  name: string;
  rankers: string[];
  policy?: PolicySpec;
  attribution_window_secs?: number;
  seed?: number;
  tie_rule?: "ignore" | "half_win";
  interleaving?: InterleavingSettings;
  rankers_per_query?: number;
  /** Needs a server with browser clicks; `null` turns them off. */
  browser_clicks?: BrowserClicksSettings | null;
  /** Needs a server with decisions: any of the settings (the others default). */
  decision?: Partial<DecisionSettings>;
  stop_rule?: StopRule;
  webhook?: WebhookInput;
  /** Needs a server with metrics: `click` and conversion metrics (docs/metrics.md). */
  metrics?: MetricInput[];
  /** The metric the policy learns from; `click` when omitted. */
  primary_metric?: string;
  /** Needs a server with units (docs/units-and-segments.md). */
  units?: UnitsInput;
  /** Needs a server with segments (docs/units-and-segments.md). */
  segments?: { max_segments?: number };
}

/** The window in which a unit and query keep their duel, and how evidence is counted. */
export interface UnitsInput {
  window_seconds?: number;
  aggregation?: "query" | "unit";
}

export interface UnitsView {
  window_seconds: number;
  aggregation: "query" | "unit";
  /** With aggregation `unit`: the unit-level comparisons the decision reads; null otherwise. */
  votes_counted: number | null;
}

/** One segment label: its counts, wins, champion and decision, from its own outcomes. */
export interface SegmentView {
  label: string;
  outcomes: number;
  ties: number;
  /** Rows and columns: `SegmentsView.rankers`; null above 50 active rankers. */
  wins: number[][] | null;
  champion: string | null;
  champion_confident: boolean;
  decision: {
    decided: boolean;
    kind: "condorcet" | "copeland";
    champion: string | null;
    winners: string[];
    /** The rankers not yet shown beaten, closest to a decision first. */
    possible_best: string[];
  };
}

export interface SegmentsView {
  max_segments: number;
  /** The active rankers: the rows and columns of each segment's `wins`. */
  rankers: string[];
  segments: SegmentView[];
}

export type MetricCredit = "first" | "all" | "value";

export interface MetricInput {
  name: string;
  credit?: MetricCredit;
  /** Conversion metrics: how long after the duel its events are accepted. */
  window_seconds?: number;
  /** Conversion metrics: what a window closing with no event means. */
  missing?: "ignore" | "tie";
}

export interface MetricView {
  name: string;
  credit: MetricCredit;
  window_seconds?: number;
  missing?: "ignore" | "tie";
  primary: boolean;
  outcomes: number;
  ties: number;
  champion: string | null;
  champion_confident: boolean;
  decision: {
    decided: boolean;
    kind: "condorcet" | "copeland";
    champion: string | null;
    winners: string[];
    outcomes_needed: number | null;
  };
  /** Null above the matrix endpoint's size. */
  matrix: { rankers: string[]; wins: number[][]; ties: number[][] } | null;
}

export type ChampionBasis =
  "confident_condorcet" | "policy" | "condorcet_candidate" | "copeland" | "none";

export interface Champion {
  ranker: string | null;
  basis: ChampionBasis;
  confident: boolean;
  condorcet_candidate: string | null;
  copeland_leaders: string[];
  copeland_score: number;
  policy_belief: string | null;
  contenders: string[];
}

/** What a possible best ranker lacks against one rival (docs/api.md, "The decision"). */
export interface MissingEvidence {
  rival: string;
  comparisons: number;
  preference: number;
  lower: number;
  upper: number;
  outcomes_needed: number | null;
}

export interface Contender {
  ranker: string;
  /** Cut to 16; `missing_total` counts them all. */
  missing: MissingEvidence[];
  missing_total: number;
  /** How many of the missing rivals were never compared with it (they are listed last). */
  never_compared: number;
}

/** Whether joust is sure which ranker is best, at error probability `delta`. */
export interface Decision {
  decided: boolean;
  kind: "condorcet" | "copeland";
  champion: string | null;
  winners: string[];
  /** Closest to a decision first, cut to 32; `possible_best_total` counts them all. */
  possible_best: Contender[];
  possible_best_total: number;
  outcomes_needed: number | null;
}

export interface DecisionSettings {
  delta: number;
  epsilon: number;
  confirmation: boolean;
  max_confirmation_share: number;
}

/** Conclude once decided and at least `min_outcomes` outcomes were applied. */
export interface StopRule {
  min_outcomes?: number;
}

/** Where decision events are posted; the secret keys their signature and is never sent back. */
export interface WebhookInput {
  url: string;
  secret: string;
}

export interface Ranker {
  name: string;
  index: number;
  active: boolean;
  wins: number;
  losses: number;
  ties: number;
  comparisons: number;
}

export interface RankerRef {
  name: string;
  index: number;
  active: boolean;
}

export interface Experiment {
  id: number;
  name: string;
  status: ExperimentStatus;
  policy: PolicySpec;
  tie_rule: "ignore" | "half_win";
  interleaving: InterleavingSettings;
  rankers_per_query: number;
  attribution_window_secs: number;
  seed: number;
  created_at: string;
  version: number;
  updated_at: string;
  duels_issued: number;
  outcomes_applied: number;
  ties_recorded: number;
  rankers: Ranker[];
  champion: Champion;
  matrix_url: string;
  browser_clicks?: BrowserClicksSettings | null;
  /** Absent from a server without decisions. */
  decision?: Decision;
  decision_settings?: DecisionSettings;
  stop_rule?: StopRule | null;
  webhook?: { url: string } | null;
  /** Absent from a server without metrics. */
  metrics?: MetricView[];
  primary_metric?: string;
  metrics_agree?: boolean;
  /** Absent from a server without units and segments. */
  units?: UnitsView;
  segments?: SegmentsView;
}

export interface ExperimentSummary {
  id: number;
  name: string;
  status: ExperimentStatus;
  policy: PolicySpec;
  rankers: number;
  created_at: string;
  version: number;
  outcomes_applied: number;
  ties_recorded: number;
  champion: string | null;
  champion_confident: boolean;
  /** Absent from a server without decisions. */
  decided?: boolean;
}

export interface ExperimentPage {
  experiments: ExperimentSummary[];
  next_after: number | null;
}

export interface Matrix {
  rankers: string[];
  wins: number[][];
  ties: number[][];
  preference: number[][];
  lower: number[][];
  upper: number[][];
  confidence: number;
  version: number;
}

export interface HistoryPoint {
  at: string;
  version: number;
  outcomes_applied: number;
  ties_recorded: number;
  duels_issued: number;
  champion: string | null;
  basis: ChampionBasis;
  confident: boolean;
  wins: number[];
  losses: number[];
}

export interface History {
  experiment_id: number;
  rankers: string[];
  total_points: number;
  points: HistoryPoint[];
}

export type KeyScope = "admin" | "ingest" | "read" | "open";

export interface DuelBody {
  duel_token: string | null;
  duel_id: string | null;
  experiment_id: number;
  rankers: string[];
  expires_at: string | null;
  concluded: boolean;
}

export interface ShownDocument {
  id: string;
  /** The ranker whose team drafted the document (Team-Draft methods), else null. */
  ranker: string | null;
}

export interface InterleavingBody {
  interleaving_token: string;
  duel_id: string;
  experiment_id: number;
  method: string;
  documents: ShownDocument[];
  /** The position of the first document in the whole interleaving (0 for the first page). */
  offset: number;
  expires_at: string;
}

export interface PairOutcome {
  rankers: [string, string];
  winner: string;
}

export interface OutcomeRecord {
  duel_id: string;
  experiment_id: number;
  /** A two-ranker duel's winner, or "tie". */
  winner?: string;
  /** A multi-ranker query's result for every pair of its rankers. */
  outcomes?: PairOutcome[];
  status: "recorded" | "duplicate";
}

export interface ClickRecord extends OutcomeRecord {
  method: string;
  credit: Record<string, number>;
}

/** How a duel ended: exactly one of a winner (or "tie"), credits per ranker, or an ordering. */
export type OutcomeSpec =
  | { winner: string; credits?: never; ordering?: never }
  | { credits: Record<string, number>; winner?: never; ordering?: never }
  | { ordering: (string | string[])[]; winner?: never; credits?: never };

/** What the user clicked: document ids, or 0-based positions in the shown list. */
export type ClickSpec =
  | { clicked: readonly string[]; clickPositions?: never }
  | { clickPositions: readonly number[]; clicked?: never };

export type OutcomeInput = { duel_token: string } & (
  { winner: string } | { credits: Record<string, number> } | { ordering: (string | string[])[] }
);

export type ClicksInput = { interleaving_token: string } & (
  { clicks: readonly string[] } | { click_positions: readonly number[] }
);

export interface ItemError {
  error: { code: string; message: string };
  status: number;
}

export interface BatchResult {
  recorded: number;
  duplicates: number;
  rejected: number;
  results: (OutcomeRecord | ItemError)[];
}

export interface ConversionInput {
  interleaving_token: string;
  metric: string;
  document: string;
  value?: number;
  event_id: string;
}

export interface ConversionRecord {
  duel_id: string;
  experiment_id: number;
  metric: string;
  event_id: string;
  status: "recorded" | "duplicate";
}

export interface ConversionBatchResult {
  recorded: number;
  duplicates: number;
  rejected: number;
  results: (ConversionRecord | ItemError)[];
}
