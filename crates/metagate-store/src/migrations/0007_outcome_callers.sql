-- metagate store, schema version 7: an outcome knows the caller whose call it answers (the
-- event's own `caller`, else its decision's, found by row id or by the call's id when it is
-- recorded), so evaluate blames a caller without joining; and a recommendation keeps the rate
-- it rested on, now and when a person rejected it: a rejection mutes it until that rate
-- worsens by the policy's `mute_margin`.

ALTER TABLE outcomes ADD COLUMN caller TEXT;
ALTER TABLE eval_recommendations ADD COLUMN evidence_rate REAL;
ALTER TABLE eval_recommendations ADD COLUMN rejected_rate REAL;
