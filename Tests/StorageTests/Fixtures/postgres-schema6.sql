--
-- PostgreSQL database dump
--

\restrict 2jluMBQgTHkeY1SInhDOM3hqQNbJWTOVjheswleGd7Yr9fd5sXEu53I3Pd4iQI2

-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: campaign_counts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.campaign_counts (
    campaign bigint NOT NULL,
    state smallint NOT NULL,
    shard integer NOT NULL,
    n bigint NOT NULL
);


--
-- Name: campaign_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.campaign_events (
    seq bigint NOT NULL,
    campaign bigint NOT NULL,
    batch bigint
);


--
-- Name: campaign_events_seq_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.campaign_events ALTER COLUMN seq ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.campaign_events_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: campaigns; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.campaigns (
    seq bigint NOT NULL,
    id text NOT NULL,
    created_at double precision NOT NULL,
    dry_run boolean NOT NULL,
    body bytea NOT NULL,
    apns_id_prefix text NOT NULL,
    devices integer NOT NULL,
    finished_at double precision,
    app text DEFAULT ''::text NOT NULL,
    environment text DEFAULT ''::text NOT NULL,
    owner text DEFAULT ''::text NOT NULL,
    send_at double precision,
    expires_at double precision,
    control smallint DEFAULT 0 NOT NULL,
    controlled_at double precision,
    push_type text DEFAULT 'alert'::text NOT NULL,
    topic text DEFAULT ''::text NOT NULL,
    priority integer DEFAULT 10 NOT NULL,
    expiration bigint,
    collapse_id text,
    lane smallint DEFAULT 0 NOT NULL,
    rate_per_second double precision,
    rate_paid_until double precision,
    served_turn bigint DEFAULT 0 NOT NULL,
    channel text
);


--
-- Name: campaigns_seq_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.campaigns ALTER COLUMN seq ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.campaigns_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: count_shards; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.count_shards
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: deliveries; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.deliveries (
    campaign bigint NOT NULL,
    idx integer NOT NULL,
    token text NOT NULL,
    body bytea,
    state smallint NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    next_at double precision DEFAULT 0 NOT NULL,
    status integer,
    reason text,
    apns_id text,
    timestamp_ms bigint,
    finished_at double precision,
    lease_owner text,
    lease_until double precision,
    lease bigint DEFAULT 0 NOT NULL,
    apns_unique_id text
);


--
-- Name: feedback_outbox; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.feedback_outbox (
    seq bigint NOT NULL,
    token text NOT NULL,
    timestamp_ms bigint NOT NULL,
    reason text NOT NULL,
    batch bigint
);


--
-- Name: feedback_outbox_seq_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.feedback_outbox ALTER COLUMN seq ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.feedback_outbox_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: idempotency_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.idempotency_keys (
    key text NOT NULL,
    request_sha256 text NOT NULL,
    campaign_id text NOT NULL,
    created_at double precision NOT NULL
);


--
-- Name: instances; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.instances (
    owner text NOT NULL,
    started_at double precision NOT NULL,
    heartbeat_at double precision NOT NULL
);


--
-- Name: live_activity_tokens; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.live_activity_tokens (
    app text NOT NULL,
    token text NOT NULL,
    kind smallint NOT NULL,
    activity text DEFAULT ''::text NOT NULL,
    registered_at_ms bigint NOT NULL
);


--
-- Name: provider_tokens; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.provider_tokens (
    team_id text NOT NULL,
    key_id text NOT NULL,
    key_sha256 text NOT NULL,
    token text,
    issued_at bigint,
    paused_until bigint
);


--
-- Name: pushgate_schema; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.pushgate_schema (
    version integer NOT NULL
);


--
-- Name: tokens; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.tokens (
    token text NOT NULL,
    dead_at_ms bigint,
    dead_reason text,
    recorded_at double precision,
    registered_at_ms bigint,
    app text DEFAULT ''::text NOT NULL
);


--
-- Name: webhook_leases; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_leases (
    outbox text NOT NULL,
    owner text NOT NULL,
    until double precision NOT NULL
);


--
-- Data for Name: campaign_counts; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.campaign_counts (campaign, state, shard, n) FROM stdin;
1	0	1	0
1	4	1	2
1	5	1	1
1	2	1	0
1	1	1	0
1	3	1	3
2	0	1	2
2	1	1	1
2	2	1	1
2	3	1	1
3	0	1	3
4	0	1	2
\.


--
-- Data for Name: campaign_events; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.campaign_events (seq, campaign, batch) FROM stdin;
1	1	\N
\.


--
-- Data for Name: campaigns; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.campaigns (seq, id, created_at, dry_run, body, apns_id_prefix, devices, finished_at, app, environment, owner, send_at, expires_at, control, controlled_at, push_type, topic, priority, expiration, collapse_id, lane, rate_per_second, rate_paid_until, served_turn, channel) FROM stdin;
1	done	1000	f	\\x7b22617073223a7b22616c657274223a226869227d7d	01234567-89ab-4cde-8f01-	6	1001				\N	\N	0	\N	alert	com.example.shop	10	\N	\N	0	\N	\N	2	\N
2	running	1000	f	\\x7b22617073223a7b22616c657274223a226869227d7d	01234567-89ab-4cde-8f01-	5	\N				\N	\N	0	\N	alert	com.example.shop	10	\N	\N	0	\N	\N	1	\N
3	paused	1000	f	\\x7b22617073223a7b22616c657274223a226869227d7d	01234567-89ab-4cde-8f01-	3	\N				\N	\N	1	1003	alert	com.example.shop	10	\N	\N	0	\N	\N	0	\N
4	scheduled	1000	f	\\x7b22617073223a7b22616c657274223a226869227d7d	01234567-89ab-4cde-8f01-	2	\N				5000	\N	0	\N	alert	com.example.shop	10	\N	\N	0	\N	\N	0	\N
\.


--
-- Data for Name: deliveries; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.deliveries (campaign, idx, token, body, state, attempts, next_at, status, reason, apns_id, timestamp_ms, finished_at, lease_owner, lease_until, lease, apns_unique_id) FROM stdin;
1	5	aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa5	\N	4	0	0	\N	PayloadTooLarge	\N	\N	1000	\N	\N	0	\N
1	0	aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa0	\N	3	1	1000	200	\N	01234567-89ab-4cde-8f01-000000000000	\N	1000	\N	\N	1	\N
1	1	aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1	\N	3	1	1000	200	\N	01234567-89ab-4cde-8f01-000000000001	\N	1000	\N	\N	1	4c3b1f2e-0000-4000-8000-000000000001
1	2	aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa2	\N	4	1	1000	400	BadDeviceToken	\N	\N	1000	\N	\N	1	\N
1	3	aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa3	\N	5	1	1000	410	Unregistered	\N	999000	1000	\N	\N	1	\N
1	4	aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa4	\N	3	2	1001	200	\N	01234567-89ab-4cde-8f01-000000000004	\N	1001	\N	\N	2	\N
2	3	aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaad	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
2	4	aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaae	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
2	2	aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaac	\N	1	1	0	\N	\N	\N	\N	\N	old-gw/1/0	1032	1	\N
2	0	aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa	\N	3	1	1002	200	\N	01234567-89ab-4cde-8f01-000000000000	\N	1002	\N	\N	1	\N
2	1	aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab	\N	2	1	1005	429	TooManyRequests	\N	\N	\N	\N	\N	1	\N
3	0	aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa14	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	1	aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa15	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
3	2	aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa16	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
4	0	aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1e	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
4	1	aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1f	\N	0	0	0	\N	\N	\N	\N	\N	\N	\N	0	\N
\.


--
-- Data for Name: feedback_outbox; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.feedback_outbox (seq, token, timestamp_ms, reason, batch) FROM stdin;
1	aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa3	999000	Unregistered	\N
\.


--
-- Data for Name: idempotency_keys; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.idempotency_keys (key, request_sha256, campaign_id, created_at) FROM stdin;
\.


--
-- Data for Name: instances; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.instances (owner, started_at, heartbeat_at) FROM stdin;
\.


--
-- Data for Name: live_activity_tokens; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.live_activity_tokens (app, token, kind, activity, registered_at_ms) FROM stdin;
\.


--
-- Data for Name: provider_tokens; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.provider_tokens (team_id, key_id, key_sha256, token, issued_at, paused_until) FROM stdin;
\.


--
-- Data for Name: pushgate_schema; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.pushgate_schema (version) FROM stdin;
6
\.


--
-- Data for Name: tokens; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.tokens (token, dead_at_ms, dead_reason, recorded_at, registered_at_ms, app) FROM stdin;
aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa3	999000	Unregistered	1000	\N	
\.


--
-- Data for Name: webhook_leases; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.webhook_leases (outbox, owner, until) FROM stdin;
\.


--
-- Name: campaign_events_seq_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.campaign_events_seq_seq', 1, true);


--
-- Name: campaigns_seq_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.campaigns_seq_seq', 4, true);


--
-- Name: count_shards; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.count_shards', 1, true);


--
-- Name: feedback_outbox_seq_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.feedback_outbox_seq_seq', 1, true);


--
-- Name: campaign_counts campaign_counts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaign_counts
    ADD CONSTRAINT campaign_counts_pkey PRIMARY KEY (campaign, state, shard);


--
-- Name: campaign_events campaign_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaign_events
    ADD CONSTRAINT campaign_events_pkey PRIMARY KEY (seq);


--
-- Name: campaigns campaigns_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaigns
    ADD CONSTRAINT campaigns_id_key UNIQUE (id);


--
-- Name: campaigns campaigns_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.campaigns
    ADD CONSTRAINT campaigns_pkey PRIMARY KEY (seq);


--
-- Name: deliveries deliveries_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.deliveries
    ADD CONSTRAINT deliveries_pkey PRIMARY KEY (campaign, idx);


--
-- Name: feedback_outbox feedback_outbox_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.feedback_outbox
    ADD CONSTRAINT feedback_outbox_pkey PRIMARY KEY (seq);


--
-- Name: idempotency_keys idempotency_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.idempotency_keys
    ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY (key);


--
-- Name: instances instances_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.instances
    ADD CONSTRAINT instances_pkey PRIMARY KEY (owner);


--
-- Name: live_activity_tokens live_activity_tokens_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.live_activity_tokens
    ADD CONSTRAINT live_activity_tokens_pkey PRIMARY KEY (app, token);


--
-- Name: provider_tokens provider_tokens_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.provider_tokens
    ADD CONSTRAINT provider_tokens_pkey PRIMARY KEY (team_id, key_id, key_sha256);


--
-- Name: tokens tokens_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tokens
    ADD CONSTRAINT tokens_pkey PRIMARY KEY (token);


--
-- Name: webhook_leases webhook_leases_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_leases
    ADD CONSTRAINT webhook_leases_pkey PRIMARY KEY (outbox);


--
-- Name: campaign_events_campaign; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX campaign_events_campaign ON public.campaign_events USING btree (campaign);


--
-- Name: campaigns_finished; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX campaigns_finished ON public.campaigns USING btree (finished_at) WHERE (finished_at IS NOT NULL);


--
-- Name: campaigns_owner; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX campaigns_owner ON public.campaigns USING btree (owner, seq);


--
-- Name: campaigns_unfinished; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX campaigns_unfinished ON public.campaigns USING btree (seq) WHERE (finished_at IS NULL);


--
-- Name: deliveries_due; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX deliveries_due ON public.deliveries USING btree (campaign, next_at, idx) WHERE (state = ANY (ARRAY[0, 2]));


--
-- Name: deliveries_in_flight; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX deliveries_in_flight ON public.deliveries USING btree (campaign, idx) WHERE (state = 1);


--
-- Name: deliveries_lease_expiry; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX deliveries_lease_expiry ON public.deliveries USING btree (lease_until) WHERE (state = 1);


--
-- Name: deliveries_retry; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX deliveries_retry ON public.deliveries USING btree (campaign, next_at, idx) WHERE (state = 2);


--
-- Name: idempotency_age; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idempotency_age ON public.idempotency_keys USING btree (created_at);


--
-- Name: idempotency_campaign; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idempotency_campaign ON public.idempotency_keys USING btree (campaign_id);


--
-- Name: live_activity_tokens_activity; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX live_activity_tokens_activity ON public.live_activity_tokens USING btree (app, activity, kind);


--
-- Name: tokens_dead; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX tokens_dead ON public.tokens USING btree (dead_at_ms, token) WHERE (dead_at_ms IS NOT NULL);


--
-- PostgreSQL database dump complete
--

\unrestrict 2jluMBQgTHkeY1SInhDOM3hqQNbJWTOVjheswleGd7Yr9fd5sXEu53I3Pd4iQI2

