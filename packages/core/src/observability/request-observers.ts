import { requestStartChannel, type RequestComputeMessage, type RequestEndMessage, type RequestErrorMessage, type RequestQueueMessage, type RequestStageMessage } from './request-channels.js';

/**
 * Core's own listener of the request stages (a tracer). Unlike a channel subscriber, it
 * decides at a request's start whether to follow it, and hears the later stages of only
 * the requests it follows: a request nobody follows (a tracer samples one in trace_rate)
 * then builds no message past its start, as Triton decides at the door whether a request
 * gets a trace.
 */
export interface RequestObserver {
  /** A request started (or was refused at the door): whether to follow it. */
  start(message: RequestStageMessage): boolean;
  queue?(message: RequestQueueMessage): void;
  computeStart?(message: RequestComputeMessage): void;
  computeInputEnd?(message: RequestComputeMessage): void;
  computeOutputStart?(message: RequestComputeMessage): void;
  computeEnd?(message: RequestComputeMessage): void;
  error?(message: RequestErrorMessage): void;
  end?(message: RequestEndMessage): void;
}

// One set per process, as the channels are global by name: a frontend asking whether anyone observes may use another copy of core (ESM or CJS) than the server's tracers.
const OBSERVERS = Symbol.for('tritium.requestObservers');
const observers: Set<RequestObserver> = ((globalThis as { [OBSERVERS]?: Set<RequestObserver> })[OBSERVERS] ??= new Set());

/** Whether anyone hears requests' starts now: core's observers or the start channel's subscribers. */
export function isObservingRequests(): boolean {
  return observers.size > 0 || requestStartChannel.hasSubscribers;
}

/** The observers that follow a request starting now (`message`), or undefined when none does. */
export function followersOf(message: RequestStageMessage): RequestObserver[] | undefined {
  let followers: RequestObserver[] | undefined;
  for (const observer of observers) if (observer.start(message)) (followers ??= []).push(observer);
  return followers;
}

/** The stages past a request's start, each a method of RequestObserver. */
export type LaterStage = Exclude<keyof RequestObserver, 'start'>;

/**
 * Hands a later stage's message to the observers that followed its request, those still
 * registered: one switched off (tracing off) hears nothing more, not even requests it followed.
 */
export function tellFollowers<S extends LaterStage>(followers: readonly RequestObserver[], stage: S, message: Parameters<NonNullable<RequestObserver[S]>>[0]): void {
  for (const observer of followers) if (observers.has(observer)) (observer[stage] as ((message: unknown) => void) | undefined)?.(message);
}

/** Registers an observer while `on`, and only then: with none, the request path pays one check per stage. */
export class RequestObserverRegistration {
  private registered = false;

  constructor(private readonly observer: RequestObserver) {}

  set(on: boolean): void {
    if (on === this.registered) return;
    this.registered = on;
    if (on) observers.add(this.observer);
    else observers.delete(this.observer);
  }
}
