import { Component, type ReactNode } from 'react';

/** A page that fails to render says so, and the rest of the console (navigation, sign-out) keeps working. */
export class PageBoundary extends Component<{ children: ReactNode; page: string }, { error: Error | null }> {
  override state = { error: null as Error | null };
  static getDerivedStateFromError(error: Error) {
    return { error };
  }
  override componentDidUpdate(previous: { page: string }) {
    if (previous.page !== this.props.page && this.state.error) this.setState({ error: null });
  }
  override render() {
    if (this.state.error) {
      return (
        <div className="alert" role="alert">
          This page failed to show: {this.state.error.message}
        </div>
      );
    }
    return this.props.children;
  }
}
